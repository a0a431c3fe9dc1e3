"""The engine: config and sweep, plan and shards, worlds, play, runner, finish."""
