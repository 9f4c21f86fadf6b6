"""``keras_sites.user_call_site``: the user's line that made an object, past its own ``__init__`` chain
(plain Python classes standing in for Keras layers; no TensorFlow)."""

from __future__ import annotations

import functools
import inspect

from xlalint.backend.keras_sites import user_call_site

HERE = __file__


def _line_of(text: str, within) -> int:
    """The line of ``within``'s source that contains ``text``."""
    lines, first = inspect.getsourcelines(within)
    return first + next(i for i, line in enumerate(lines) if text in line)


class Base:
    def __init__(self, **kwargs):
        self.site = user_call_site(self, "__init__")


class Layer(Base):
    def __init__(self, units, **kwargs):
        super().__init__(**kwargs)
        self.units = units


class Block(Layer):
    def __init__(self, depth, **kwargs):
        super().__init__(depth, **kwargs)
        self.inner = Block(depth - 1) if depth else None


def _logged(init):
    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        return init(self, *args, **kwargs)
    return wrapper


def _counted(init):
    @functools.wraps(init)
    def wrapper(*args, **kwargs):  # self only inside *args
        return init(*args, **kwargs)
    return wrapper


class Decorated(Base):
    @_logged
    def __init__(self):
        super().__init__()


class DecoratedByArgs(Base):
    @_counted
    def __init__(self, *, units=1):
        super().__init__()


def make():
    return Layer(4), Block(1), Decorated(), DecoratedByArgs(units=2)


def test_the_site_is_the_line_that_makes_the_object_not_a_super_call():
    layer, block = make()[:2]
    made = _line_of("return Layer(4)", make)
    assert layer.site == (HERE, made) and block.site == (HERE, made)


def test_an_object_made_in_its_own_class_init_is_placed_there():
    block = make()[1]
    assert block.inner.site == (HERE, _line_of("self.inner = Block", Block))


def test_a_decorated_init_and_its_wrapper_are_passed_over():
    decorated, by_args = make()[2:]
    assert decorated.site == by_args.site == (HERE, _line_of("return Layer(4)", make))


def test_generated_code_is_passed_over():
    assert eval(compile("user_call_site(object(), '__init__')", "<generated>", "eval")) == (
        HERE, _line_of("eval(compile(", test_generated_code_is_passed_over))
