import sys

from .dispatch.client import main

sys.exit(main())
