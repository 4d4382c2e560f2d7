"""`python -m bench`: the benchmark suite (bench/suite.py; bench/README.md explains the tables)."""

from bench.suite import main

raise SystemExit(main())
