from xlalint.cli import main

raise SystemExit(main())
