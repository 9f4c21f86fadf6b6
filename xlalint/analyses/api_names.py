"""The public TensorFlow API behind op types users meet in findings.

Used to word messages ("`tf.numpy_function` (PyFunc)") and to find the call's
column on the user's line. Ops not listed are named by their op type alone.
"""

import re

API_OF_OP = {
    "AsString": "tf.strings.as_string",
    "Bincount": "tf.math.bincount",
    "CropAndResize": "tf.image.crop_and_resize",
    "Cumsum": "tf.cumsum",
    "DebugNumericSummaryV2": "tf.debugging.enable_check_numerics",
    "DenseBincount": "tf.math.bincount",
    "EagerPyFunc": "tf.py_function",
    "HistogramFixedWidth": "tf.histogram_fixed_width",
    "ListDiff": "tf.setdiff1d",
    "Lu": "tf.linalg.lu",
    "NonMaxSuppressionV3": "tf.image.non_max_suppression",
    "NonMaxSuppressionV4": "tf.image.non_max_suppression_padded",
    "NonMaxSuppressionV5": "tf.image.non_max_suppression_with_scores",
    "PrintV2": "tf.print",
    "PyFunc": "tf.numpy_function",
    "PyFuncStateless": "tf.numpy_function",
    "RaggedTensorToTensor": "tf.RaggedTensor.to_tensor",
    "SegmentSum": "tf.math.segment_sum",
    "SegmentMax": "tf.math.segment_max",
    "SegmentMean": "tf.math.segment_mean",
    "StringFormat": "tf.strings.format",
    "StringJoin": "tf.strings.join",
    "StringLength": "tf.strings.length",
    "StringSplitV2": "tf.strings.split",
    "StringToHashBucketFast": "tf.strings.to_hash_bucket_fast",
    "StringToNumber": "tf.strings.to_number",
    "Substr": "tf.strings.substr",
    "Unique": "tf.unique",
    "UniqueV2": "tf.unique",
    "UniqueWithCounts": "tf.unique_with_counts",
    "UniqueWithCountsV2": "tf.unique_with_counts",
    "Where": "tf.where",
}


# Public APIs that make an op another API is named for: the op's name scope tells which the user called
# (tf.boolean_mask builds its Where under "boolean_mask/").
SCOPED_APIS = {("Where", "boolean_mask"): "tf.boolean_mask"}


def api_of(node: dict) -> str | None:
    """The public API the user called for ``node``: by its name scope where that tells, else by its op type."""
    scopes = node["name"].split("/")[:-1]
    for (op_type, scope), api in SCOPED_APIS.items():
        if node["type"] == op_type and scope in scopes:
            return api
    return API_OF_OP.get(node["type"])


def describe_node(node: dict) -> str:
    """``describe`` of the node's own API: ``"`tf.boolean_mask` (Where)"`` for the Where a mask made."""
    return _described(api_of(node), node["type"])


def describe(op_type: str) -> str:
    """``"`tf.print` (PrintV2)"`` when the API is known, else ``"`PrintV2`"``."""
    return _described(API_OF_OP.get(op_type), op_type)


def _described(api: str | None, op_type: str) -> str:
    return f"`{api}` ({op_type})" if api else f"`{op_type}`"


def call_name(op_type: str, api: str | None = None) -> str:
    """The name the user's call ends with: ``numpy_function`` for PyFunc, ``gather`` for GatherV2 (``api``:
    the node's own, ``api_of``, where it is known)."""
    api = api or API_OF_OP.get(op_type)
    if api:
        return api.rsplit(".", 1)[-1]
    return re.sub(r"(?<!^)(?=[A-Z])", "_", re.sub(r"V\d+$", "", op_type)).lower()
