"""`python -m exporter` runs the same CLI as `pi-session`."""

from exporter.cli import main

if __name__ == "__main__":
    main()
