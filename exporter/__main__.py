"""`python -m exporter` runs the same CLI as `pi-session`."""

from exporter.cli import run

if __name__ == "__main__":
    run()
