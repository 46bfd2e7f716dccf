// Bittensor keyfiles (bittensor-wallet 4.0.0 src/keyfile.rs; PROTOCOL 9.7 and 9.9):
//  - plaintext JSON: accountId, publicKey, privateKey, secretPhrase, secretSeed, ss58Address
//    (all strings; any key order; bittensor <= 7 wrote spaces and explicit nulls);
//  - public-only JSON (coldkeypub.txt, hotkeys/<name>pub.txt): accountId, publicKey, ss58Address;
//  - NaCl-encrypted: "$NACL" || nonce(24) || crypto_secretbox_easy(json), key = Argon2i13
//    (opslimit 8, memlimit 512 MiB, fixed salt) of the password.
// Ansible Vault and legacy Fernet files are recognised and reported as unsupported.
//
// Thread safety: reentrant. Memory: each password derivation allocates 512 MiB for about a
// second (libsodium's OPSLIMIT/MEMLIMIT_SENSITIVE, which existing coldkeys were encrypted with).
// Secrets: returned strings that hold secrets are documented as such; the caller wipes them
// (sodium_memzero). Error details never contain key material.
#pragma once

#include <bt/key_error.hpp>
#include <bt/keypair.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace bt {

/// How a keyfile's bytes are protected (by their first bytes, as btwallet decides).
enum class keyfile_encryption {
  none,           ///< plaintext JSON
  nacl,           ///< "$NACL": supported
  ansible_vault,  ///< "$ANSIBLE_VAULT": legacy, not supported here
  legacy_fernet,  ///< "gAAAAA": legacy bittensor <= 6 Fernet, not supported (not even by btwallet
                  ///< 4)
};

keyfile_encryption detect_keyfile_encryption(std::span<const std::uint8_t> data) noexcept;
inline bool is_keyfile_encrypted(std::span<const std::uint8_t> data) noexcept {
  return detect_keyfile_encryption(data) != keyfile_encryption::none;
}

// --- plaintext JSON ---

/// The full keyfile JSON of `kp`: compact, keys in the order accountId, publicKey, privateKey,
/// secretPhrase, secretSeed, ss58Address, absent values omitted (never null), no trailing
/// newline. privateKey is the canonical sr25519 form (scalar || nonce) or ed25519 seed || public.
/// Holds secrets: the caller wipes the result.
std::string serialize_keyfile(const keypair& kp);
/// The public-only form {"accountId","publicKey","ss58Address"}.
std::string serialize_public_keyfile(const keypair& kp);

/// Parses plaintext keyfile JSON as btwallet's deserialize_keypair_from_keyfile_data: an object
/// whose values are strings or null (anything else → keyfile_invalid); then the first present of
/// secretPhrase (mnemonic) → secretSeed (32-byte mini secret or 64-byte secret) → privateKey
/// (64 bytes, canonical form, else the ×8 polkadot-js form, whichever matches publicKey) →
/// ss58Address (public only) → keyfile_invalid. A privateKey or 64-byte secretSeed whose public
/// key matches neither publicKey/accountId/ss58Address is rejected (keyfile_invalid). Unknown
/// keys are ignored. Mnemonic errors keep their key_errc (mnemonic_checksum, ...).
std::optional<keypair> deserialize_keyfile(std::string_view json, error& err,
                                           crypto_type type = crypto_type::sr25519);

// --- NaCl encryption ---

/// NACL_SALT of btwallet and bittensor 6.
inline constexpr std::array<std::uint8_t, 16> nacl_salt = {
    0x13, 0x71, 0x83, 0xdf, 0xf1, 0x5a, 0x09, 0xbc, 0x9c, 0x90, 0xb5, 0x51, 0x87, 0x39, 0xe9, 0xb1};

/// Key parameters. The defaults are the only values btwallet reads and writes; lowering them
/// makes files that other wallets cannot open (and that are cheaper to brute-force).
struct keyfile_kdf {
  unsigned long long opslimit = 8;   ///< crypto_pwhash_OPSLIMIT_SENSITIVE
  std::size_t memlimit = 536870912;  ///< crypto_pwhash_MEMLIMIT_SENSITIVE (512 MiB)
};

/// A 32-byte secretbox key derived from a password; wiped on destruction.
struct keyfile_key {
  std::array<std::uint8_t, 32> bytes{};
  keyfile_key() = default;
  keyfile_key(const keyfile_key&) = default;
  keyfile_key& operator=(const keyfile_key&) = default;
  ~keyfile_key();
};

/// crypto_pwhash(ALG_ARGON2I13) of the UTF-8 password with nacl_salt. keyfile_io when libsodium
/// fails (typically: the 512 MiB cannot be allocated).
std::optional<keyfile_key> derive_keyfile_key(std::string_view password, error& err,
                                              keyfile_kdf kdf = {});

/// "$NACL" || random nonce || crypto_secretbox_easy(plaintext).
std::vector<std::uint8_t> encrypt_keyfile_data(std::span<const std::uint8_t> plaintext,
                                               const keyfile_key& key);
/// Derives the key, then encrypts; nullopt (err set) when the derivation fails.
std::optional<std::vector<std::uint8_t>> encrypt_keyfile_data(
    std::span<const std::uint8_t> plaintext, std::string_view password, error& err);

/// Opens "$NACL" data: keyfile_wrong_password when the MAC does not verify (wrong password or a
/// corrupted file), keyfile_invalid when it is not NaCl data or is truncated (Ansible Vault and
/// Fernet get a message saying they are unsupported). Returns the plaintext JSON, a secret: the
/// caller wipes it.
std::optional<std::string> decrypt_keyfile_data(std::span<const std::uint8_t> data,
                                                const keyfile_key& key, error& err);
/// Derives the key (about a second, 512 MiB) only after checking the format.
std::optional<std::string> decrypt_keyfile_data(std::span<const std::uint8_t> data,
                                                std::string_view password, error& err);

/// Any keyfile's bytes to a keypair: plaintext is parsed directly; NaCl data needs `password`
/// (keyfile_wrong_password when absent or wrong).
std::optional<keypair> keypair_from_keyfile_data(std::span<const std::uint8_t> data,
                                                 std::optional<std::string_view> password,
                                                 error& err,
                                                 crypto_type type = crypto_type::sr25519);

// --- files ---

/// Reads a whole file: keyfile_not_found when it does not exist, keyfile_io on other failures
/// (detail names the path and the OS error). Files above 1 MiB are refused as not keyfiles.
std::optional<std::vector<std::uint8_t>> read_keyfile_bytes(const std::filesystem::path& path,
                                                            error& err);

/// Who besides its owner may read or replace the secret keyfile at `path`: empty when no one can
/// (the file is mode 0600 or stricter, and its folder is not writable by other users or is
/// sticky), else one sentence naming what is exposed and the chmod that fixes it, e.g.
/// "mode 0666 lets other users read and change it, its folder /w/hotkeys (mode 0777) lets other
/// users replace it; run: chmod 600 /w/hotkeys/h && chmod 700 /w/hotkeys". Empty as well when the
/// file cannot be examined (reading it reports that). The loaders do not refuse such a file (a key
/// mounted read-only into a container is often 0644); the tools warn with this sentence.
std::string keyfile_exposure(const std::filesystem::path& path);

/// Writes `data` to `path` atomically with mode 0600: a temporary file in the same directory
/// (created 0600 with O_EXCL), write, fsync, rename over `path`, fsync the directory. Either
/// the old file or the complete new one exists afterwards, never a partial one. When
/// `overwrite` is false and `path` exists: keyfile_io ("already exists"). The directory must
/// exist. Returns false and sets `err` on failure (the temporary file is removed).
bool write_keyfile_bytes(const std::filesystem::path& path, std::span<const std::uint8_t> data,
                         bool overwrite, error& err);

}  // namespace bt
