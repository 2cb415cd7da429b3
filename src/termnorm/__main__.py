"""``python -m termnorm``: the ``termnorm`` command (:func:`termnorm.cli.main.main`)."""

from termnorm.cli.main import main

if __name__ == "__main__":
    main()
