"""Runs every check of the Appwrite compatibility suite against SESAME_ENDPOINT; exit 0 only if all pass."""
import sys

import harness
import test_account  # noqa: F401 - each module registers its checks
import test_passkeys  # noqa: F401
import test_users  # noqa: F401
import test_project  # noqa: F401 - after the passkey checks: the relying party ID is then permanent
import test_rate_limits  # noqa: F401 - last: it spends this IP's sign-in starts

if __name__ == "__main__":
    sys.exit(harness.run())
