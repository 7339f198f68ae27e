from bpcheck.main import main

raise SystemExit(main())
