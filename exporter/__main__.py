"""`python -m exporter` runs the same CLI as `pi-session`."""

from exporter.launch import run

if __name__ == "__main__":
    run()
