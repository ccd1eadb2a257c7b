"""A tiny check runner for the Appwrite compatibility suite: no pytest, only the pinned SDK.

Environment: SESAME_ENDPOINT (http://127.0.0.1:PORT/v1), SESAME_PROJECT (a project ID), SESAME_KEY (an API key of
that project with every scope). Every check runs against that live server; a failed check prints its traceback
and the process exits 1.
"""
import os
import traceback
import uuid

from appwrite.client import Client
from appwrite.exception import AppwriteException

ENDPOINT = os.environ["SESAME_ENDPOINT"]
PROJECT = os.environ["SESAME_PROJECT"]
KEY = os.environ["SESAME_KEY"]

CHECKS = []
SEEN_TYPES = set()  # every error type an expect_error call observed


def check(function):
    """Registers a check; checks run in definition order."""
    CHECKS.append(function)
    return function


def client(key=None, session=None, project=PROJECT, cookie=None):
    """A fresh SDK client; a key and a session are never put on the same client (the key would win)."""
    c = Client()
    c.set_endpoint(ENDPOINT)
    c.set_project(project)
    if key:
        c.set_key(key)
    if session:
        c.set_session(session)
    if cookie:
        c.set_cookie(cookie)
    return c


def unique_email():
    return f"user-{uuid.uuid4().hex[:12]}@example.org"


def expect_error(type_, code, function, *args, **kwargs):
    """Calls `function` and requires an AppwriteException with this `type` and HTTP status `code`."""
    try:
        result = function(*args, **kwargs)
    except AppwriteException as error:
        assert error.type == type_ and error.code == code, \
            f"expected {type_}/{code}, got {error.type}/{error.code}: {error.message}"
        assert error.message, "an error needs a message"
        SEEN_TYPES.add(error.type)
        return error
    raise AssertionError(f"expected {type_}/{code}, but the call succeeded: {result!r}")


def expect_equal(actual, expected, what=""):
    assert actual == expected, f"{what}: expected {expected!r}, got {actual!r}"


def run():
    """Runs every registered check and returns the process exit status."""
    failed = 0
    for function in CHECKS:
        try:
            function()
            print(f"ok   {function.__name__}")
        except Exception:  # noqa: BLE001 - every failure is reported, then counted
            failed += 1
            print(f"FAIL {function.__name__}")
            traceback.print_exc()
    print(f"{len(CHECKS) - failed} passed, {failed} failed")
    return 1 if failed else 0
