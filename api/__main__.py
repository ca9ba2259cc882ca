import sys

from rulegrad.cli import main

sys.exit(main())
