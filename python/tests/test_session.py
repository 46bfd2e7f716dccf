"""Sessions between our own ends from Python: Dendrite(session=True) against bt-axon (sessions on
by default) and against the module's Axon with and without accept_sessions."""
import bittensor_cpp as bt


def test_session_with_bt_axon(bt_axon, alice, Dummy):
    with bt.Dendrite(alice, session=True) as d:
        for i in range(5):
            r = d.query(bt_axon, Dummy(dummy_input=i), timeout=10)
            assert r.dendrite.status_code == 200 and r.dummy_output == 2 * i
        s = d.stats()
    assert s["sessions_offered"] == 1 and s["sessions_established"] == 1
    assert s["sessions_rejected"] == 0 and s["session_requests"] == 4


def test_session_with_the_module_axon(alice, bob, Dummy):
    def forward(syn):
        syn.dummy_output = syn.dummy_input + 1

    for accept in (True, False):
        ax = bt.Axon(bob, accept_sessions=accept)
        ax.attach(Dummy, forward)
        with ax, bt.Dendrite(alice, session=True, verify_responses="required") as d:
            for i in range(4):
                r = d.query(ax.info(), Dummy(dummy_input=i), timeout=10)
                assert r.dendrite.status_code == 200 and r.dummy_output == i + 1
                assert r.dendrite.hotkey == alice.ss58_address
            s = d.stats()
        assert s["sessions_offered"] == 1
        assert s["sessions_established"] == (1 if accept else 0)
        assert s["session_requests"] == (3 if accept else 0)
        assert s["sessions_rejected"] == 0


def test_session_off_by_default(bt_axon, alice, Dummy):
    with bt.Dendrite(alice) as d:
        assert d.query(bt_axon, Dummy(dummy_input=1), timeout=10).dendrite.status_code == 200
        s = d.stats()
    assert s["sessions_offered"] == 0 and s["session_requests"] == 0
