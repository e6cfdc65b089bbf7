# A tmpfs inside the workspace from run_shell (issue 16, class 5): unshare's and bubblewrap's own namespaces,
# mount(8). Refused (no capabilities, no new namespaces); the harness checks that no mount appears.
# expect: unshare refused
# expect: bwrap refused
# expect: mount refused
mkdir -p mnt
unshare -rm sh -c 'mount -t tmpfs none mnt && echo inside' >/dev/null 2>&1 && echo "unshare CHANGED" || echo "unshare refused"
bwrap --bind / / --tmpfs "$PWD/mnt" true >/dev/null 2>&1 && echo "bwrap CHANGED" || echo "bwrap refused"
mount -t tmpfs none mnt >/dev/null 2>&1 && echo "mount CHANGED" || echo "mount refused"
