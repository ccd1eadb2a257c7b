"""Runs every check of the Authsignal compatibility suite against AUTHSIGNAL_API_URL; exit 0 only if all pass."""
import sys

import harness
import test_official  # noqa: F401 - each module registers its checks
import test_server  # noqa: F401
import test_passkeys  # noqa: F401


@harness.check
def every_answer_was_labelled_exactly_application_json():
    assert harness.RESPONSES, "no answers recorded"
    wrong = [r for r in harness.RESPONSES if r[3] != "application/json" and not (r[0] == "OPTIONS" and r[2] == 204)]
    assert not wrong, f"answers not labelled exactly application/json: {wrong[:5]}"
    print(f"     answers checked: {len(harness.RESPONSES)}")


if __name__ == "__main__":
    sys.exit(harness.run())
