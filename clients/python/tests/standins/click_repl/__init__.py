"""STAND-IN for the `click-repl` package, used only by fencegate's tests.

`celery.bin.amqp` imports `register_repl` from it; the test machine's package
index does not carry the package. The tests never start Celery's interactive
shell. Here `register_repl` adds a `repl` command that says the real package
is needed. Users install the real package (`pip install click-repl`, pulled in
by celery).
"""

import click


def register_repl(group: click.Group, name: str = "repl") -> None:
    """Adds a `repl` command that explains it needs the real click-repl."""

    @group.command(name=name)
    def repl() -> None:
        raise click.UsageError("the interactive shell needs the click-repl package")
