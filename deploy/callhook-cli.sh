#!/bin/sh
# `callhook <command>` on a server that runs deploy/callhook.service, as the service runs: its user, its data dir,
# its config and secrets (docs/deploying.md#the-command-line-on-the-server). Run as root:
#
#   install -m 0755 deploy/callhook-cli.sh /usr/local/bin/callhook
#   callhook keys show
#
# Never run the CLI as root itself: a SQLite file it created would be root's, and serve could not open it.
set -eu
if [ -r /etc/callhook/callhook.env ]; then
  set -a
  . /etc/callhook/callhook.env
  set +a
fi
export CALLHOOK_DATA_DIR=/var/lib/callhook CALLHOOK_CONFIG=/etc/callhook/callhook.yaml PORT=8787
umask 077
exec setpriv --reuid=callhook --regid=callhook --init-groups -- /usr/bin/node /opt/callhook/dist/cli/index.js "$@"
