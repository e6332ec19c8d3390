import sys

from memhost.cli import main

sys.exit(main())
