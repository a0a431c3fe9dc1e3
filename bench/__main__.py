"""`python -m bench`: the same command as `memeval bench`."""

from memeval.cli.bench import command

command(prog_name="python -m bench")
