"""The official SDK's own test-suite (authsignal/client_tests.py, shipped in the 4.1.0 wheel), run unchanged against
Sesame: track, get/update action, validate, users, authenticators, and the bad-secret error text.
"""
import io
import unittest

import authsignal.client_tests

import harness


@harness.check
def the_official_sdk_test_suite_passes_unchanged():
    # Its test_actions expects user123 to be enrolled (state CHALLENGE_REQUIRED), as on Authsignal's own test tenant.
    harness.sdk().enroll_verified_authenticator("user123", {"verificationMethod": "EMAIL_OTP", "email": "user123@example.org"})
    suite = unittest.defaultTestLoader.loadTestsFromModule(authsignal.client_tests)
    output = io.StringIO()
    result = unittest.TextTestRunner(stream=output, verbosity=2).run(suite)
    assert result.testsRun >= 9, output.getvalue()
    assert result.wasSuccessful() and not result.skipped, output.getvalue()
    print("     " + output.getvalue().strip().splitlines()[-1] + f" ({result.testsRun} official tests)")
