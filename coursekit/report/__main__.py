from coursekit.report.cli import main

raise SystemExit(main())
