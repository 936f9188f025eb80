"""STAND-IN for the `click-didyoumean` package, used only by fencegate's tests.

celery's command-line module imports `DYMGroup` from it; the test machine's
package index does not carry the package. The tests start Celery workers
through Celery's Python API, never its command line. Here `DYMGroup` is a
plain click group without "did you mean" suggestions. Users install the real
package (`pip install click-didyoumean`, pulled in by celery).
"""

import click


class DYMGroup(click.Group):
    """A click group; the real one also suggests close command names on a typo."""
