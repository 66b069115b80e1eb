import sys

from pmap_core.cli import main

sys.exit(main())
