"""Axon() keyword arguments come from bt::axon_options' table (python/src/axon.cpp): every value
field by its name, durations in seconds; the object fields (nonces, logger) are no keywords."""

import pytest

import bittensor_cpp as bt

# One value of the right type for each keyword docs/python.md lists.
VALUES = {
    "external_ip": "203.0.113.7", "external_port": 8091, "coldkey": "", "reuse_port": False,
    "proxy_protocol": False, "trusted_proxies": [], "proxy_header_timeout": 3.0,
    "proxy_max_header_bytes": 4096, "io_threads": 1, "max_workers": 2,
    "max_queued_requests": 16, "max_header_bytes": 16384, "max_body_bytes": 1 << 20,
    "max_connections": 100, "idle_buffer_bytes": 0, "header_timeout": 5.0,
    "idle_timeout": 5.0, "write_timeout": 5.0, "body_timeout": 5.0, "body_min_rate": 1024,
    "max_request_timeout": 60.0, "nonce_future_skew": 30.0, "nonce_max_timeout": 60.0,
    "epistula_past_window": 8.0, "epistula_future_window": 2.0,
    "epistula_require_signed_for": True, "sign_responses": True, "accept_sessions": False,
    "session_max_requests": 10, "session_max_seconds": 60, "sign_error_responses": True,
    "list_synapses_on_404": False, "insecure_skip_verification": False, "admin_listen": "",
    "admin_timeout": 5.0, "admin_max_header_bytes": 8192, "admin_max_connections": 8,
    "drain_timeout": 1.0,
}


def test_every_table_keyword_is_accepted(bob):
    bt.Axon(bob, **VALUES)


@pytest.mark.parametrize("name", ["nonces", "logger", "max_wokers"])
def test_object_fields_and_unknown_names_are_no_keywords(bob, name):
    with pytest.raises(TypeError, match=f"unexpected keyword argument '{name}'"):
        bt.Axon(bob, **{name: None})


def test_a_keyword_reaches_the_options(bob):
    # trusted_proxies is checked by the axon's constructor: a malformed block is refused there.
    with pytest.raises(ValueError, match="nonsense"):
        bt.Axon(bob, trusted_proxies=["nonsense"])


def test_wrong_types_are_type_errors(bob):
    with pytest.raises(TypeError, match="trusted_proxies has the wrong type"):
        bt.Axon(bob, trusted_proxies=3)
    with pytest.raises(TypeError, match="reuse_port has the wrong type"):
        bt.Axon(bob, reuse_port="yes")
    with pytest.raises(ValueError, match="drain_timeout must be a non-negative number"):
        bt.Axon(bob, drain_timeout=-1)


# Dendrite() keywords come from bt::dendrite_options' table (python/src/dendrite.cpp).
DENDRITE_VALUES = {
    "external_ip": "", "version": 10002000, "threads": 1, "max_concurrency": 8,
    "max_idle_per_endpoint": 2, "max_idle_total": 16, "idle_timeout": 5.0,
    "max_response_body_bytes": 1 << 20, "max_response_header_bytes": 1 << 16,
    "max_interim_responses": 4, "insecure_skip_signing": False, "verify_responses": "required",
    "session": False,
}


def test_every_dendrite_keyword_is_accepted(alice):
    with bt.Dendrite(alice, **DENDRITE_VALUES):
        pass


def test_dendrite_bad_keywords(alice):
    with pytest.raises(TypeError, match="unexpected keyword argument 'logger'"):
        bt.Dendrite(alice, logger=None)
    with pytest.raises(TypeError, match="unexpected keyword argument 'thread'"):
        bt.Dendrite(alice, thread=2)
    with pytest.raises(TypeError, match="max_concurrency has the wrong type"):
        bt.Dendrite(alice, max_concurrency="many")
    with pytest.raises(ValueError, match="idle_timeout must be a non-negative number"):
        bt.Dendrite(alice, idle_timeout=-1)
    with pytest.raises(ValueError, match="verify_responses"):
        bt.Dendrite(alice, verify_responses="sometimes")
