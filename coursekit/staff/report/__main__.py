from coursekit.staff.report.cli import main

raise SystemExit(main())
