"""`memeval run`: the main job."""

from __future__ import annotations

import os
import shlex
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from click.core import ParameterSource

from memeval.cli._compat import compat_option
from memeval.cli._errors import InputError
from memeval.cli._outdir import check_out_dir, disk_error
from memeval.errors import MemevalError
from memeval.run.interrupt import EXIT_INTERRUPTED, RunInterrupted

if TYPE_CHECKING:
    from memeval.run.config import LLMOptions

EXIT_OK = 0
EXIT_FAILED = 1  # the run could not run (one `Error:` line) or a unit crashed
EXIT_ERRORS = 3  # it ran, rows are written, but errors passed --max-error-rate or a
#                  scenario failed to load: the figures must not be read as they stand

EXAMPLES = """
\b
Examples:
  memeval run                                  # bundled fixtures; bm25, recency, oracle
  memeval run -s bm25 -s none --out reports/try1
  memeval run --scenarios 'my/scenarios/*.yaml' --repeats 3 --shuffle-manifest
  memeval run --config sweep.toml --out reports/sweep1   # a reviewed sweep file
  memeval run -s none -s bm25 -s oracle --answerer extractive   # answer accuracy too
  ANTHROPIC_API_KEY=... memeval run -s claude -s 'claude:claude-sonnet-4-6?prompt=recall'
"""


def update_latest_link(run_dir: Path) -> None:
    """Point `<reports>/latest` at the newest run (a symlink; replaced atomically)."""
    link = run_dir.parent / "latest"
    tmp = run_dir.parent / f".latest.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(run_dir.name, target_is_directory=True)
    os.replace(tmp, link)


@click.command("run", epilog=EXAMPLES)
@click.option("--config", "config_file", type=click.Path(dir_okay=False, exists=True,
                                                         path_type=Path), default=None,
              metavar="TOML", help="A sweep file: selectors × models × prompts × judges × "
                                   "scenarios (see docs/scale.md); options given here win.")
@click.option("--scenarios", "scenarios", multiple=True, metavar="PATH|GLOB",
              help="Scenario YAML files, folders or globs. Default: the bundled fixtures.")
@click.option("-s", "--selector", "selectors", multiple=True, metavar="SPEC",
              help="A selector spec, repeatable (bm25, recency?k=3, oracle, claude, ...). "
                   "Default: bm25, recency, oracle.")
@click.option("-j", "--judge", "judges", multiple=True, metavar="SPEC",
              help="A judge spec, repeatable (gold, claude). Default: gold.")
@click.option("--answerer", default=None, metavar="SPEC",
              help="Answer each turn that has a gold answer from what the agent has in "
                   "context then: extractive (offline), claude:<model>, "
                   "openai:<model>?base_url=URL. Adds answer F1 / exact match (docs/research.md).")
@click.option("--answer-judge", default=None, metavar="SPEC",
              help="Grade the answers correct or incorrect with this model "
                   "(claude:<model>, openai:<model>?base_url=URL): answer_correct.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Run folder. Default: reports/<UTC timestamp>/ (and reports/latest).")
@click.option("--repeats", type=click.IntRange(min=1), default=1, show_default=True,
              help="Sessions per scenario × selector (exposes unstable selectors).")
@click.option("--shuffle-manifest", is_flag=True,
              help="Shuffle each manifest per repeat, so order bias shows up as flips.")
@click.option("--concurrency", type=click.IntRange(min=1), default=16, show_default=True,
              help="Units (turns, or stretches of a session) evaluated at once: the most "
                   "model calls in flight per endpoint; the door backs off on 429/529.")
@click.option("--seed", type=int, default=0, show_default=True, help="Base seed for shuffles.")
@compat_option
@click.option("--history", type=click.Choice(["gold", "own"]), default="gold", show_default=True,
              help="gold: every turn starts from the state the gold labels imply, so all "
                   "selectors see the same manifests (paired comparison); own: each "
                   "selector's session runs end to end, as a user would live it.")
@click.option("--max-cost", type=click.FloatRange(min=0), default=None, metavar="USD",
              help="Stop issuing model calls once the run's spend would pass this.")
@click.option("--cache", "cache", type=click.Path(dir_okay=False), default=None,
              help="Model response cache (SQLite). Default: ~/.cache/memeval/llm.sqlite.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the response cache.")
@click.option("--record-cassette", type=click.Path(dir_okay=False), default=None,
              help="Record every model exchange into this cassette (safe to commit).")
@click.option("--replay-cassette", type=click.Path(dir_okay=False, exists=True), default=None,
              help="Answer model calls from this cassette only; no network, no key.")
@click.option("--batches", is_flag=True, default=None,
              help="Send model calls through the Message Batches API (half price).")
@click.option("--prices", type=click.Path(dir_okay=False, exists=True), default=None,
              help="Prices (USD per million tokens) added to the bundled table, e.g. for "
                   "local models (see docs/models.md).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="SECONDS",
              help="Seconds a model has to answer one attempt (default 60). A spec's "
                   "timeout= sets it for one selector or judge.")
@click.option("--deadline", type=click.FloatRange(min=0, min_open=True), default=None,
              metavar="SECONDS",
              help="Seconds one model call may take, retries included (default 80); a "
                   "slow local model needs more. A spec's deadline= sets it for one "
                   "selector or judge.")
@click.option("--max-response-mb", type=click.FloatRange(min=0.001), default=None,
              metavar="MB",
              help="Megabytes one model answer may hold once decoded (default 8); a larger "
                   "one, or an endless one, is dropped and recorded as that turn's error.")
@click.option("--category", "categories", multiple=True, metavar="NAME",
              help="Run only turns of this category (repeatable).")
@click.option("--tag", "tags", multiple=True, metavar="TAG",
              help="Run only turns with this tag or category (repeatable), e.g. locomo-4.")
@click.option("--exclude-tag", "exclude_tags", multiple=True, metavar="TAG",
              help="Leave out turns with this tag (repeatable), e.g. adversarial.")
@click.option("--scenario", "scenario_ids", multiple=True, metavar="ID",
              help="Run only this scenario id (repeatable).")
@click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N",
              help="At most N turns per scenario (a quick look at a big set).")
@click.option("--shard", default=None, metavar="K/N",
              help="Run only share K of N of the units (stable hash); join the shares "
                   "with `memeval merge`. See docs/scale.md.")
@click.option("--max-error-rate", type=click.FloatRange(0, 1), default=0.0, show_default=True,
              help="Exit with code 3 when a selector or judge errs on more than this share "
                   "of its turns (the rows are still written).")
@click.option("--retry-errors", is_flag=True,
              help="Resuming into --out: run again the units that had a selector or judge "
                   "error (an API outage, a rate limit); answers that succeeded come from the "
                   "cache, so only the failed calls are paid again.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def command(config_file: Path | None, scenarios: tuple[str, ...], selectors: tuple[str, ...],
            judges: tuple[str, ...], answerer: str | None, answer_judge: str | None,
            out: Path | None, repeats: int, shuffle_manifest: bool, concurrency: int,
            seed: int, compat: str, history: str, max_cost: float | None, cache: str | None,
            no_cache: bool,
            record_cassette: str | None, replay_cassette: str | None, batches: bool | None,
            prices: str | None, timeout: float | None, deadline: float | None,
            max_response_mb: float | None, categories: tuple[str, ...], tags: tuple[str, ...],
            exclude_tags: tuple[str, ...], scenario_ids: tuple[str, ...], limit: int | None,
            shard: str | None, max_error_rate: float, retry_errors: bool,
            quiet: bool) -> None:
    """Evaluate selectors on scenarios and write a run folder.

    The folder holds results.jsonl (one row per turn × selector, with every judge's
    verdicts), payloads.jsonl, summary.json, config.json and index.html. Rerunning the
    same command with the same --out resumes an interrupted run.

    Exit codes: 0 finished cleanly; 1 the run failed (another run holds the folder, or
    a unit crashed; rerun to resume); 2 bad command input (an option, a spec, a
    scenario file, the folder, a missing key); 3 finished, but a selector or judge
    erred on more than --max-error-rate of its turns, or a scenario file failed to
    load; 130 stopped by Ctrl-C or SIGTERM (finished units kept; the message names
    the resume command).
    """
    from memeval.log import RunFolderBusy
    from memeval.run.config import LLMOptions, RunConfig
    from memeval.run.evaluate import evaluate, timestamped_run_dir

    if cache and no_cache:
        raise click.UsageError("--cache and --no-cache contradict each other; pick one")
    llm = LLMOptions(cache=False if no_cache else cache, record=record_cassette,
                     replay=replay_cassette, max_cost=max_cost, batches=batches, prices=prices,
                     timeout=timeout, deadline=deadline, max_response_mb=max_response_mb)
    given: dict[str, Any] = dict(
        scenarios=scenarios, selectors=selectors, judges=judges, repeats=repeats,
        shuffle_manifest=shuffle_manifest, concurrency=concurrency, seed=seed, compat=compat,
        history=history, categories=categories, tags=tags, exclude_tags=exclude_tags,
        scenario_ids=scenario_ids, limit=limit, answerer=answerer, answer_judge=answer_judge)
    try:
        chosen, llm = _with_sweep(config_file, given, llm)
        config = RunConfig(**{k: v for k, v in chosen.items()  # empty lists mean "the default"
                              if v or k not in ("scenarios", "selectors", "judges")}, llm=llm)
    except (MemevalError, TypeError) as exc:
        raise InputError(f"--config {config_file}: {exc}" if isinstance(exc, TypeError)
                         else str(exc)) from None
    run_dir = out or timestamped_run_dir(Path("reports"))
    check_out_dir(run_dir)
    from memeval.report import RunPage
    from memeval.run.plan import Shard

    try:
        share = None if shard is None else Shard.parse(shard)
        outcome = evaluate(config, run_dir, progress=not quiet, page=RunPage(), shard=share,
                           retry_errors=retry_errors, say=lambda m: click.echo(m, err=True))
    except RunInterrupted as exc:
        resume = shlex.join(["memeval", *sys.argv[1:],
                             *([] if out else ["--out", str(run_dir)])])
        click.echo(f"{exc}. The folder is marked unfinished; resume with:\n  {resume}",
                   err=True)
        raise SystemExit(EXIT_INTERRUPTED) from None
    except RunFolderBusy as exc:  # not a mistake in the command: another run holds the folder
        raise click.ClickException(str(exc)) from None
    except MemevalError as exc:  # a bad spec, scenario path, --out or setting: exit code 2
        raise InputError(str(exc)) from None
    except OSError as exc:  # the disk filled up, or the folder changed under the run
        raise click.ClickException(disk_error(exc, run_dir)) from None
    if out is None:
        update_latest_link(run_dir)
    for problem in outcome.scenario_errors:
        click.echo(f"skipped: {problem}", err=True)
    retried = f", {outcome.units_retried} of them again for errors" \
        if outcome.units_retried else ""
    click.echo(f"{outcome.rows} rows in {run_dir} "
               f"({outcome.units_run} units run{retried}, {outcome.units_resumed} resumed)")
    table = outcome.summary.get("table")
    if table:
        click.echo(table)
    from memeval.cli._reasons import error_reasons

    for line in error_reasons(run_dir, outcome.summary):
        click.echo(line)
    click.echo(f"report: {run_dir / 'index.html'}")
    llm_summary = outcome.summary.get("llm") or {}
    if llm_summary.get("served_from_cache"):
        click.echo("note: every model answer came from the cache or a cassette; no model was "
                   "called in this run (without --replay-cassette, --no-cache asks the "
                   "model again)", err=True)
    if llm_summary.get("cache_error"):
        click.echo(f"warning: some answers were not cached, so a rerun pays for them "
                   f"again: {llm_summary['cache_error']}", err=True)
    if llm_summary.get("unpriced"):
        click.echo(f"note: {llm_summary['unpriced']} calls went to models the price table "
                   "does not know, so the run's cost is unknown; give their prices with "
                   "--prices FILE", err=True)
    for alert in outcome.summary.get("alerts") or []:
        click.echo(f"alert: {alert}", err=True)
    if outcome.unit_errors:
        for problem in outcome.unit_errors:
            click.echo(f"error: {problem}", err=True)
        raise SystemExit(EXIT_FAILED)
    worst = max((max(r.get("selector_error_rate") or 0, r.get("judge_error_rate") or 0)
                 for r in outcome.summary.get("overall") or []), default=0.0)
    if worst > max_error_rate or outcome.scenario_errors:
        why = (f"errors on {worst:.0%} of some selector's or judge's turns (allowed "
               f"{max_error_rate:.0%})" if worst > max_error_rate else
               f"{len(outcome.scenario_errors)} scenario file(s) failed to load")
        retry = (" Once the cause is fixed, rerun the same command with --retry-errors"
                 + ("" if out else f" --out {run_dir}") + " to redo only those turns."
                 if worst > max_error_rate else "")
        click.echo(f"error: the run finished with {why}; its figures rest on fewer turns "
                   f"than planned. See the alerts above and the report.{retry}", err=True)
        raise SystemExit(EXIT_ERRORS)


_LLM_FLAGS = {"cache": ("cache", "no_cache"), "record": ("record_cassette",),
              "replay": ("replay_cassette",), "max_cost": ("max_cost",),
              "batches": ("batches",), "prices": ("prices",), "timeout": ("timeout",),
              "deadline": ("deadline",), "max_response_mb": ("max_response_mb",)}


def _with_sweep(config_file: Path | None, given: dict[str, Any],
                llm: LLMOptions) -> tuple[dict[str, Any], LLMOptions]:
    """The run's settings: the sweep file's, with every option typed on the command line
    taking precedence."""
    if config_file is None:
        return given, llm
    from memeval.run.sweep import load_sweep

    sweep = load_sweep(config_file)
    ctx = click.get_current_context()

    def typed(*names: str) -> bool:
        return any(ctx.get_parameter_source(n) is ParameterSource.COMMANDLINE for n in names)

    chosen = {k: (v if typed(k) or k not in sweep else sweep[k]) for k, v in given.items()}
    from_file = sweep.get("llm")
    if from_file is not None:
        llm = replace(from_file, **{f: getattr(llm, f) for f, flags in _LLM_FLAGS.items()
                                    if typed(*flags)})
    return chosen, llm
