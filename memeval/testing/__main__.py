"""`python -m memeval.testing`: serve the fake Messages API until interrupted.

Lets a whole `memeval run` go through the real SDK offline:
    python -m memeval.testing --port 8765 &
    ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=offline memeval run -s claude
"""

from __future__ import annotations

import threading

import click

from memeval.testing.fake_server import FakeMessagesServer


@click.command(context_settings={"help_option_names": ["-h", "--help"]},
               epilog="Example: python -m memeval.testing --port 8765")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0 picks a free one).")
@click.option("--latency", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="Seconds added before every answer.")
def main(port: int, latency: float) -> None:
    """Serve the keyword model behind a loopback Messages API."""
    server = FakeMessagesServer(latency=latency, port=port).start()
    click.echo(f"FakeMessagesServer listening on {server.url} (Ctrl-C to stop)")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    main()
