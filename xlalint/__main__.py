from xlalint.cli.main import main

raise SystemExit(main())
