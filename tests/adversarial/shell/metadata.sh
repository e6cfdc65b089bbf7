# File metadata outside the workspace (issue 16, class 1), from run_shell: chmod a host 0600 file and put the
# setuid bit on a host program, touch /dev/null, read and set extended attributes; stat a host file.
# expect[landlock]: chmod refused
# expect[landlock]: setuid refused
# expect[landlock]: touch refused
# expect[landlock]: xattr get OSError 95
# expect[landlock]: xattr set OSError 95
# expect[landlock]: stat host file visible
# expect[namespaces]: chmod refused
# expect[namespaces]: setuid refused
# expect[namespaces]: touch refused
# expect[namespaces]: xattr get FileNotFoundError 2
# expect[namespaces]: xattr set OSError 30
# expect[namespaces]: stat host file refused
chmod 666 {{SENTINEL}}/secret.txt 2>/dev/null && echo "chmod CHANGED" || echo "chmod refused"
chmod 4755 {{SENTINEL}}/tool 2>/dev/null && echo "setuid CHANGED" || echo "setuid refused"
touch /dev/null 2>/dev/null && echo "touch CHANGED" || echo "touch refused"
stat {{SENTINEL}}/secret.txt >/dev/null 2>&1 && echo "stat host file visible" || echo "stat host file refused"
python3 -I -c "
import os
for label, action in [('xattr get', lambda: os.getxattr('{{SENTINEL}}/secret.txt', 'user.toolmode_secret')),
                      ('xattr set', lambda: os.setxattr('/dev/null', 'user.evil', b'1'))]:
    try:
        print(label, 'LEAKED', action())
    except OSError as e:
        print(label, type(e).__name__, e.errno)"
