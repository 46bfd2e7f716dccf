"""Keypair and Wallet: known vectors, round trips, and bad input giving clear Python exceptions."""
import pytest

import bittensor_cpp as bt

ALICE = "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY"
# Substrate's development phrase (subkey's DEV_PHRASE); //Alice is derived from it.
DEV_PHRASE = "bottom drive obey lake curtain smoke basket hold race lonely fit walk"


def test_from_uri_alice_address():
    assert bt.Keypair.from_uri("//Alice").ss58_address == ALICE


def test_from_mnemonic_matches_uri():
    kp = bt.Keypair.from_mnemonic(DEV_PHRASE)
    assert kp.ss58_address == bt.Keypair.from_uri(DEV_PHRASE).ss58_address
    assert kp.ss58_address != ALICE


def test_from_seed_hex_and_bytes_agree():
    seed = bytes(range(32))
    a = bt.Keypair.from_seed(seed)
    b = bt.Keypair.from_seed("0x" + seed.hex())
    assert a.ss58_address == b.ss58_address
    assert len(a.public_key) == 32


def test_sign_verify_round_trip_and_mismatch():
    kp = bt.Keypair.from_uri("//Alice")
    sig = kp.sign(b"message")
    assert len(sig) == 64
    assert kp.verify(b"message", sig)
    assert kp.verify("message", "0x" + sig.hex())
    assert not kp.verify(b"other", sig)
    assert not bt.Keypair.from_uri("//Bob").verify(b"message", sig)
    assert not kp.verify(b"message", b"short")


def test_public_only_keypair_verifies_but_cannot_sign():
    kp = bt.Keypair.from_uri("//Alice")
    pub = bt.Keypair.from_ss58(ALICE)
    assert not pub.has_secret
    assert pub.verify(b"m", kp.sign(b"m"))
    with pytest.raises(bt.Error, match="no secret"):
        pub.sign(b"m")


def test_ed25519():
    kp = bt.Keypair.from_uri("//Alice", crypto_type="ed25519")
    assert kp.crypto_type == "ed25519"
    assert kp.ss58_address != ALICE
    assert kp.verify(b"x", kp.sign(b"x"))


@pytest.mark.parametrize("address", ["", "5Gxxx", ALICE[:-1] + "Z", "0OIl", ALICE + "a"])
def test_invalid_ss58_is_error(address):
    with pytest.raises(bt.Error, match="SS58"):
        bt.Keypair.from_ss58(address)


def test_error_is_a_value_error():
    assert issubclass(bt.Error, ValueError)


def test_bad_inputs():
    with pytest.raises(bt.Error):
        bt.Keypair.from_mnemonic("not a valid mnemonic phrase at all")
    with pytest.raises(bt.Error):
        bt.Keypair.from_uri("not a uri//")
    with pytest.raises(ValueError, match="crypto_type"):
        bt.Keypair.from_uri("//Alice", crypto_type="rsa")
    with pytest.raises(ValueError, match="32 bytes"):
        bt.Keypair.from_seed(b"short")
    with pytest.raises(TypeError):
        bt.Keypair.from_uri(42)
    with pytest.raises(TypeError, match="bytes or str"):
        bt.Keypair.from_uri("//Alice").sign(12)
    with pytest.raises(TypeError):
        bt.Keypair.from_uri("//Alice").verify(b"m", 3.5)


def test_repr_shows_no_secret():
    r = repr(bt.Keypair.from_uri("//Alice"))
    assert ALICE in r and "Alice" not in r.replace(ALICE, "")


def test_wallet_round_trip(tmp_path):
    w = bt.Wallet(name="w", hotkey="h", path=str(tmp_path))
    assert w.name == "w" and w.hotkey_str == "h"
    with pytest.raises(bt.Error, match="not found|No such|does not exist"):
        w.hotkey()
    hot = bt.Keypair.from_uri("//Bob")
    cold = bt.Keypair.from_uri("//Alice")
    w.write_hotkey(hot)
    w.write_coldkeypub(cold)
    assert w.hotkey().ss58_address == hot.ss58_address
    assert w.hotkey().has_secret
    pub = w.coldkeypub()
    assert pub.ss58_address == ALICE and not pub.has_secret
    with pytest.raises(bt.Error):
        w.write_hotkey(hot)  # exists, overwrite=False
    w.write_hotkey(hot, overwrite=True)


def test_wallet_bad_names(tmp_path):
    with pytest.raises(ValueError):
        bt.Wallet(name="../evil", path=str(tmp_path))
    with pytest.raises(TypeError):
        bt.Wallet(name=3)
    with pytest.raises(TypeError):
        bt.Wallet("positional-not-allowed")


def test_wallet_corrupt_hotkey_file(tmp_path):
    w = bt.Wallet(name="w", hotkey="h", path=str(tmp_path))
    (tmp_path / "w" / "hotkeys").mkdir(parents=True)
    (tmp_path / "w" / "hotkeys" / "h").write_text("{not json")
    with pytest.raises(bt.Error):
        w.hotkey()
