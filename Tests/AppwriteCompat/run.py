"""Runs every check of the Appwrite compatibility suite against SESAME_ENDPOINT; exit 0 only if all pass."""
import sys

import harness
import test_account  # noqa: F401 - each module registers its checks
import test_passkeys  # noqa: F401
import test_users  # noqa: F401
import test_project  # noqa: F401 - after the passkey checks: the relying party ID is then permanent
import test_rate_limits  # noqa: F401 - last: it spends this IP's sign-in starts

SEED_ERROR_TYPES = {
    "user_auth_method_unsupported", "user_reauthentication_required", "user_invalid_token", "user_passkey_invalid",
    "user_passkey_limit_exceeded", "user_passkey_already_exists", "user_passkey_not_found", "user_blocked",
    "general_argument_invalid", "general_rate_limit_exceeded",
}


@harness.check
def every_error_type_of_the_seed_was_raised_through_the_sdk():
    missing = SEED_ERROR_TYPES - harness.SEEN_TYPES
    assert not missing, f"never triggered: {sorted(missing)}"
    print(f"     error types seen: {len(harness.SEEN_TYPES)} ({', '.join(sorted(harness.SEEN_TYPES))})")


if __name__ == "__main__":
    sys.exit(harness.run())
