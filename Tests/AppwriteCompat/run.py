"""Runs every check of the Appwrite compatibility suite against SESAME_ENDPOINT; exit 0 only if all pass."""
import sys

import harness
import test_account  # noqa: F401 - registers its checks
import test_passkeys  # noqa: F401 - registers its checks

if __name__ == "__main__":
    sys.exit(harness.run())
