import sys

from .dispatcher.client import main

sys.exit(main())
