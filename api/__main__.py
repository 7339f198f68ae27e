from bpcheck.cli.main import main

raise SystemExit(main())
