"""Loopback fakes of remote services, so publish tests never touch the internet."""
