import sys

from pmap_core.cli.commands import main

sys.exit(main())
