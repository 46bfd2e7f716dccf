#!/usr/bin/env bash
# Installs the Debian package <deb> with apt-get, checks it, and purges it again (as root: this
# changes the machine; scripts/package --install runs it). Checked:
#   * the installed bt-axon runs and /usr/bin/python3 imports the installed module (no PYTHONPATH)
#   * the unit is installed, and its User= and Group= are a system user and group the postinst
#     made: a system UID, no login shell, a home of mode 0700 owned by that user
#   * every file and directory the package lists is owned by root and writable by nobody else
#   * a second install (apt-get install --reinstall) changes nothing: the same UID and GID
#   * nothing was enabled or started by the install
#   * purge: the user and group are gone, so are the unit and an instance's enablement link
#     (systemctl enable, made by the test), and a home holding a wallet file is kept with that
#     file and a message saying so (the test then deletes it)
#   * a user of that name the operator made before the install is used as it is (its home and
#     comment unchanged) and is still there after the purge
# The machine must not have the user, nor its home, before: the test refuses to run otherwise,
# since a purge would then keep or touch someone's own user or wallets.
# Usage: tests/packaging/deb_install_test.sh <deb>
set -euo pipefail
deb=$(realpath "${1:?usage: $0 <bittensor-cpp_*.deb>}")
unit=/usr/lib/systemd/system/bt-axon@.service
python=/usr/bin/python3

fail() { echo "deb_install_test: FAILED: $*" >&2; exit 1; }
((EUID == 0)) || fail "needs root (apt-get install)"
! dpkg-query -W bittensor-cpp >/dev/null 2>&1 || fail "bittensor-cpp is installed already: purge it first"

# The unit's user, read from the package's own unit, not assumed.
user=$(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ".$unit" | sed -nE 's/^User=(.+)$/\1/p')
group=$(dpkg-deb --fsys-tarfile "$deb" | tar -xOf - ".$unit" | sed -nE 's/^Group=(.+)$/\1/p')
[[ -n $user && $group == "$user" ]] || fail "the unit's User= '$user' and Group= '$group' should be one name"
home=/home/$user
! getent passwd "$user" >/dev/null || fail "a user $user exists already: run this on a machine without it"
! getent group "$group" >/dev/null || fail "a group $group exists already: run this on a machine without it"
[[ ! -e $home ]] || fail "$home exists already: run this on a machine without it"
link=/etc/systemd/system/multi-user.target.wants/bt-axon@1.service
[[ ! -e $link && ! -L $link ]] || fail "$link exists already: run this on a machine without it"

# On every exit, a failed check's included: the package purged, and what the test or a failed
# purge left (none of it existed before, as checked above) removed.
work=$(mktemp -d /tmp/bt-deb-install.XXXXXX)
cleanup() {
  apt-get purge -y -qq bittensor-cpp >/dev/null 2>&1 || true
  rm -f "$link"
  if getent passwd "$user" >/dev/null; then userdel "$user" || true; fi
  if getent group "$group" >/dev/null; then groupdel "$group" || true; fi
  rm -rf "$home" "$work"
}
trap cleanup EXIT

echo "== apt-get install $deb (purged again below)"
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log" >&2; fail "apt-get install failed"; }

/usr/bin/bt-axon --help >/dev/null || fail "the installed bt-axon --help failed"
(cd / && env -u PYTHONPATH "$python" -c "
import bittensor_cpp
assert bittensor_cpp.__file__.startswith('/usr/lib/python3/dist-packages/'), bittensor_cpp.__file__
print('deb_install_test: installed module', bittensor_cpp.__file__)") || fail "the installed module does not import"

# The unit and its user.
[[ -f $unit ]] || fail "the unit $unit was not installed"
[[ $(sed -nE 's/^User=(.+)$/\1/p' "$unit") == "$user" ]] || fail "the installed unit's User= is not $user"
IFS=: read -r _ _ uid gid _ user_home shell < <(getent passwd "$user") || fail "no user $user after the install"
[[ $(getent group "$group" | cut -d: -f3) == "$gid" ]] || fail "$user's primary group is not $group"
sys_uid_max=$(awk '$1 == "SYS_UID_MAX" {print $2}' /etc/login.defs)
((uid <= ${sys_uid_max:-999})) || fail "$user has UID $uid: not a system user"
[[ $shell == /usr/sbin/nologin ]] || fail "$user's shell is '$shell', not /usr/sbin/nologin"
[[ $user_home == "$home" ]] || fail "$user's home is '$user_home', not $home"
[[ $(stat -c '%U:%G %a' "$home") == "$user:$group 700" ]] ||
  fail "$home is $(stat -c '%U:%G %a' "$home"), not $user:$group 700"
password=$(getent shadow "$user" | cut -d: -f2)
[[ $password == '!'* || $password == '*'* ]] || fail "$user can log in with a password"
echo "deb_install_test: user $user (UID $uid), group $group, home $home (0700), shell $shell"

# The package's own files: root's, and writable only by root.
while IFS= read -r path; do
  [[ -e $path || -L $path ]] || continue # a directory shared with other packages, e.g. /.
  [[ $(stat -c '%U:%G' "$path") == root:root ]] || fail "$path is owned by $(stat -c '%U:%G' "$path")"
  [[ -L $path ]] || (((0$(stat -c '%a' "$path") & 022) == 0)) || fail "$path is group- or world-writable"
done < <(dpkg -L bittensor-cpp)
echo "deb_install_test: the $(dpkg -L bittensor-cpp | wc -l) paths of the package are root's"

# Nothing enabled or started.
! compgen -G "/etc/systemd/system/*.wants/bt-axon@*" >/dev/null || fail "the install enabled an instance"
! pgrep -x bt-axon >/dev/null || fail "a bt-axon runs after the install"

# A second configure changes nothing.
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --reinstall "$deb" >"$work/reinstall.log" 2>&1 ||
  { cat "$work/reinstall.log" >&2; fail "apt-get install --reinstall failed"; }
[[ $(id -u "$user"):$(id -g "$user") == "$uid:$gid" ]] || fail "the reinstall changed $user's UID or GID"
echo "deb_install_test: a reinstall kept UID $uid and GID $gid"

# Purge: an enabled instance and a wallet in the home, then neither user nor unit stays.
mkdir -p "$(dirname "$link")"
ln -s "$unit" "$link" # what systemctl enable bt-axon@1 writes
install -d -o "$user" -g "$group" -m 0700 "$home/.bittensor" "$home/.bittensor/wallets"
install -o "$user" -g "$group" -m 0600 /dev/null "$home/.bittensor/wallets/test-coldkey"
apt-get purge -y -qq bittensor-cpp >"$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; fail "apt-get purge failed"; }
! dpkg-query -W bittensor-cpp >/dev/null 2>&1 || fail "bittensor-cpp is still known to dpkg after the purge"
! getent passwd "$user" >/dev/null || fail "the user $user is still there after the purge"
! getent group "$group" >/dev/null || fail "the group $group is still there after the purge"
[[ ! -e $unit ]] || fail "$unit is still there after the purge"
[[ ! -L $link ]] || fail "the enablement link $link is still there after the purge"
[[ -f $home/.bittensor/wallets/test-coldkey ]] || fail "the purge deleted the wallet in $home"
grep -q "kept $home" "$work/purge.log" || fail "the purge did not say that it kept $home: $(cat "$work/purge.log")"
echo "deb_install_test: purged: no user, group, unit or enablement link; $home kept with its wallet"
rm -rf "$home"

# The operator's own user: kept by the install and by the purge.
operator_home=$work/operator-home
useradd --system --user-group --home-dir "$operator_home" --shell /usr/sbin/nologin \
        --comment "made by the operator" "$user"
operator_entry=$(getent passwd "$user")
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$deb" >"$work/install2.log" 2>&1 ||
  { cat "$work/install2.log" >&2; fail "apt-get install over the operator's user failed"; }
[[ $(getent passwd "$user") == "$operator_entry" ]] || fail "the install changed the operator's user $user"
[[ ! -e $home ]] || fail "the install made $home for the operator's user"
apt-get purge -y -qq bittensor-cpp >"$work/purge2.log" 2>&1 ||
  { cat "$work/purge2.log" >&2; fail "apt-get purge over the operator's user failed"; }
[[ $(getent passwd "$user") == "$operator_entry" ]] || fail "the purge removed or changed the operator's user $user"
echo "deb_install_test: a $user the operator made is kept as it was by the install and the purge"
echo "deb_install_test: ok"
