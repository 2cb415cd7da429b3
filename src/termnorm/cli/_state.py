"""Process-wide CLI flags set by the root callback."""

DEBUG = False
