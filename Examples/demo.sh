#!/usr/bin/env bash
# make demo: builds the example relay and chat client (debug), starts the relay on 127.0.0.1 on a
# free port, and runs three clients (alice, bob, carol) through a script: a 1:1 conversation, a
# group of three, a client offline and back (crashing once before acknowledging a message it
# persisted, then restarted from its database), a contact whose identity key changed (the
# script shows the safety numbers, then accepts the new key), a reinstalled device the relay
# reports stale (the sender accepts its new key and re-sends the refused message), an account
# export restored on a new device (a new registration id, no question asked, nothing lost), an
# older copy of a database file put back (detected at open) and a file sent as an attachment. Prints what each client received and exits non-zero when an
# expected message did not arrive, when anything else arrived, when a plaintext shows up in
# the relay's log or in the attachment it stored, or when a check of a step fails.
#
# DEMO_KEEP=1 keeps the working folder (databases, key files, logs); DEMO_TIMEOUT (seconds,
# default 60) bounds each wait.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

SWIFT=${SWIFT:-swift}
TIMEOUT=${DEMO_TIMEOUT:-60}

echo "building Examples (debug)..."
"$SWIFT" build
BIN=$("$SWIFT" build --show-bin-path)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/sessionkit-demo.XXXXXX")
declare -A PID FD
RELAY_PID=""

cleanup() {
    local status=$?
    for name in "${!PID[@]}"; do kill "${PID[$name]}" 2>/dev/null || true; done
    [ -z "$RELAY_PID" ] || kill "$RELAY_PID" 2>/dev/null || true
    wait 2>/dev/null || true
    if [ "${DEMO_KEEP:-0}" = 1 ] || [ "$status" != 0 ]; then
        echo "working folder kept: $WORK"
    else
        rm -rf "$WORK"
    fi
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# A client that died must fail the script (a write to its FIFO then fails), not kill it silently.
trap '' PIPE

fail() {
    echo "DEMO FAILED: $*" >&2
    for log in "$WORK"/*.log; do
        echo "--- $(basename "$log") (last lines)" >&2
        tail -n 15 "$log" >&2
    done
    exit 1
}

# wait_for LOG TEXT [FROM_LINE]: waits until LOG has a line containing TEXT (after line FROM_LINE).
wait_for() {
    local log=$1 text=$2 from=${3:-0} waited=0
    until tail -n "+$((from + 1))" "$log" 2>/dev/null | grep -qF -- "$text"; do
        sleep 0.1
        waited=$((waited + 1))
        [ "$waited" -lt $((TIMEOUT * 10)) ] || fail "$(basename "$log" .log) did not print \"$text\" within ${TIMEOUT}s"
    done
}

step() { printf '\n== %s\n' "$*"; }

# start NAME [DATABASE [OPTION...]]: starts NAME's client on its database (NAME.sqlite) and waits
# until it is connected and has published its prekeys. Its commands come from a FIFO, its output
# goes to NAME.log.
start() {
    local name=$1 db=${2:-$1.sqlite} fd
    shift $(($# < 2 ? $# : 2))
    local log="$WORK/$name.log"
    touch "$log"
    local from
    from=$(wc -l < "$log")
    [ -p "$WORK/$name.in" ] || mkfifo "$WORK/$name.in"
    # --prekeys 1: one one-time prekey and one one-time KEM prekey each, so that the relay soon
    # hands out the last-resort KEM prekey.
    "$BIN/chat-client" --name "$name" --server "ws://127.0.0.1:$PORT" --db "$WORK/$db" --prekeys 1 "$@" \
        < "$WORK/$name.in" >> "$log" 2>&1 &
    PID[$name]=$!
    exec {fd}> "$WORK/$name.in"
    FD[$name]=$fd
    wait_for "$log" "ready" "$from"
    tail -n "+$((from + 1))" "$log" | grep -E '^(new device|restarted|restored)' | sed "s/^/$name: /"
}

# lines NAME: the number of lines in NAME's log so far (for `expect NAME TEXT FROM`).
lines() { wc -l < "$WORK/$1.log"; }

# value NAME TEXT [FROM]: the rest of NAME's last line containing TEXT (after line FROM), after
# its last ": ".
value() { tail -n "+$((${3:-0} + 1))" "$WORK/$1.log" | grep -F -- "$2" | tail -n 1 | sed 's/.*: //'; }

# crash NAME: starts NAME's client with --exit-before-ack: it processes its first delivery
# (decrypts it and persists the result) and exits before acknowledging it, as a crash would.
crash() {
    local name=$1 fd waited=0
    "$BIN/chat-client" --name "$name" --server "ws://127.0.0.1:$PORT" --db "$WORK/$name.sqlite" --prekeys 1 \
        --exit-before-ack < "$WORK/$name.in" >> "$WORK/$name.log" 2>&1 &
    local pid=$!
    exec {fd}> "$WORK/$name.in"
    while kill -0 "$pid" 2>/dev/null; do
        sleep 0.1
        waited=$((waited + 1))
        [ "$waited" -lt $((TIMEOUT * 10)) ] || fail "$name did not exit within ${TIMEOUT}s"
    done
    exec {fd}>&-
    if wait "$pid"; then fail "$name exited normally instead of before acknowledging"; fi
}

# run NAME COMMAND...: gives NAME a command (see chat-client's main.swift).
run() {
    local name=$1
    shift
    echo "$name> $*"
    echo "$*" >&"${FD[$name]}"
}

# expect NAME TEXT [FROM]: waits until NAME printed a line containing TEXT (after line FROM), and
# shows it.
expect() {
    local name=$1 text=$2 from=${3:-0}
    wait_for "$WORK/$name.log" "$text" "$from"
    echo "  $name: $(tail -n "+$((from + 1))" "$WORK/$name.log" | grep -F -- "$text" | tail -n 1)"
}

# stop NAME: quits NAME's client (it disconnects) and waits for it to exit.
stop() {
    local name=$1 fd=${FD[$1]}
    run "$name" quit
    exec {fd}>&-
    wait "${PID[$name]}" || fail "$name exited with an error"
    unset "PID[$name]"
}

# --- The relay -------------------------------------------------------------------------------
"$BIN/relay-server" --host 127.0.0.1 --port 0 --attachments "$WORK/relay-attachments" > "$WORK/relay.log" 2>&1 &
RELAY_PID=$!
wait_for "$WORK/relay.log" "listening on "
PORT=$(grep -m1 -o 'listening on 127.0.0.1:[0-9]*' "$WORK/relay.log" | sed 's/.*://')
echo "relay listening on 127.0.0.1:$PORT (log: relay.log)"

# --- The script ------------------------------------------------------------------------------
step "Alice, Bob and Carol register: new databases, new identities, prekeys published"
start alice
start bob
start carol

step "A 1:1 conversation (Alice starts a PQXDH session from Bob's bundle)"
run alice send bob Hi Bob, this is Alice.
expect bob "received from alice: Hi Bob, this is Alice."
run bob send alice Hi Alice, got it.
expect alice "received from bob: Hi Alice, got it."

step "A group of three: each sets the members (a server's roster), then sends its sender key to the others pairwise"
run alice members book-club alice bob carol
run bob members book-club alice bob carol
run carol members book-club alice bob carol
expect alice "members of book-club: bob.1, carol.1"
expect bob "members of book-club: alice.1, carol.1"
expect carol "members of book-club: alice.1, bob.1"
run alice group book-club
run bob group book-club
run carol group book-club
for pair in alice:bob alice:carol bob:alice bob:carol carol:alice carol:bob; do
    expect "${pair%%:*}" "got the sender key of ${pair##*:}.1 for book-club"
done
run alice gsend book-club Chapter 1 tonight?
expect bob "received in book-club from alice: Chapter 1 tonight?"
expect carol "received in book-club from alice: Chapter 1 tonight?"
run carol gsend book-club Yes, I will bring tea.
expect alice "received in book-club from carol: Yes, I will bring tea."
expect bob "received in book-club from carol: Yes, I will bring tea."

step "Bob goes offline; what is sent to him waits at the relay"
stop bob
run alice send bob Are you there?
expect alice "sent to bob.1: Are you there?"
run carol gsend book-club Bob, we start at eight.
expect carol "sent to book-club (alice.1, bob.1): Bob, we start at eight."
wait_for "$WORK/relay.log" "queued (offline)"
echo "  relay: $(grep -c 'queued (offline)' "$WORK/relay.log") envelope(s) queued for offline devices"

step "Bob comes back, persists the first message, and crashes before acknowledging it"
crash bob
expect bob "received from alice: Are you there?"
expect bob "exiting before acknowledging"

step "Bob restarts from his database: the relay delivers both again; the first is a duplicate, acknowledged silently"
start bob
expect bob "received in book-club from carol: Bob, we start at eight."
[ "$(grep -c 'bob.1 connected, 2 envelope(s) queued' "$WORK/relay.log")" = 2 ] \
    || fail "the relay did not deliver the unacknowledged message again"
echo "  relay: $(grep 'bob.1 connected, 2 envelope(s) queued' "$WORK/relay.log" | tail -n 1 | sed 's/^relay: //') (again)"
run bob history alice
expect bob "archived in alice: Hi Bob, this is Alice."
expect bob "archived in alice: Are you there?"
run bob send alice Back, with the same sessions.
expect alice "received from bob: Back, with the same sessions."

step "Carol reinstalls: a new database, so a new identity key"
stop carol
start carol carol-reinstalled.sqlite
run carol send alice Hi Alice, I reinstalled the app.
expect alice "identity key of carol.1 CHANGED"
expect alice "received from carol: Hi Alice, I reinstalled the app."
run alice send carol Is that really you?
expect alice "not sent to carol.1: its identity key changed"

step "Alice and Carol compare safety numbers, then Alice accepts the new key"
run alice safety carol
expect alice "safety number with carol.1 before its key changed:"
expect alice "safety number with carol.1 (unverified):"
run carol safety alice
expect carol "safety number with alice.1 (trusted):"
after=$(grep -F "safety number with carol.1 (unverified):" "$WORK/alice.log" | tail -n 1 | sed 's/.*: //')
theirs=$(grep -F "safety number with alice.1 (trusted):" "$WORK/carol.log" | tail -n 1 | sed 's/.*: //')
[ "$after" = "$theirs" ] || fail "Alice's and Carol's safety numbers differ: $after / $theirs"
echo "  the numbers on both phones match: $after"
run alice accept carol
expect alice "accepted the new identity key of carol.1"
run alice send carol Welcome back, Carol.
expect carol "received from alice: Welcome back, Carol."

step "Bob reinstalls: a new database, so a new identity key and a new registration id"
stop bob
start bob bob-reinstalled.sqlite
a=$(lines alice)
run alice send bob Bob, are you still there?
expect alice "refused by the relay: devices of bob stale [1]" "$a"
expect alice "not sent to bob.1: untrustedIdentity" "$a"
grep -qF "refused 1 envelope(s) alice.1 -> bob: stale [1]" "$WORK/relay.log" || fail "the relay did not refuse the message as stale"
echo "  relay: $(grep -F "refused 1 envelope(s) alice.1 -> bob: stale [1]" "$WORK/relay.log" | tail -n 1 | sed 's/^relay: //')"

step "Alice compares the safety numbers (the number changed), accepts the new key, and re-sends the refused message (never the old key's log)"
run alice safety bob
expect alice "safety number with bob.1 before its key changed:" "$a"
expect alice "safety number with bob.1 (new key, not accepted yet):" "$a"
before=$(value alice "safety number with bob.1 before its key changed:" "$a")
after=$(value alice "safety number with bob.1 (new key, not accepted yet):" "$a")
[ -n "$before" ] && [ "$before" != "$after" ] || fail "the safety number with bob did not change: $before / $after"
echo "  the safety number changed"
run alice accept bob
expect alice "accepted the new identity key of bob.1" "$a"
expect alice "re-sending 1 refused message(s)" "$a"
expect bob "received from alice: Bob, are you still there?"
run bob safety alice
expect bob "safety number with alice.1 (trusted):"
[ "$(value bob "safety number with alice.1 (trusted):")" = "$after" ] || fail "Bob's safety number differs from Alice's new one"
echo "  Bob's phone shows Alice's new number: $after"
run bob send alice Yes, I reinstalled. Got it.
expect alice "received from bob: Yes, I reinstalled. Got it.
received from bob: Got it, on a chain the copy does not know.
received from bob: Read you, from the old copy."

step "Bob restores his account from an export onto a new database: the same identity, a new registration id"
run bob export "$WORK/bob.export" alice
expect bob "exported bob's account to"
old_id=$(grep -F "new device bob.1: created $WORK/bob-reinstalled.sqlite" "$WORK/bob.log" | sed 's/.*registration id \([0-9]*\).*/\1/')
stop bob
start bob bob-restored.sqlite --restore "$WORK/bob.export"
new_id=$(grep -F "restored bob.1 from" "$WORK/bob.log" | tail -n 1 | sed 's/.*new registration id \([0-9]*\).*/\1/')
[ -n "$new_id" ] && [ "$new_id" != "$old_id" ] || fail "the restored device kept registration id $old_id"
echo "  registration id $old_id -> $new_id"
a=$(lines alice)
b=$(lines bob)
run alice send bob Welcome back again.
expect alice "refused by the relay: devices of bob stale [1]" "$a"
expect alice "re-sending 1 message(s) from the send log to bob.1 in the new session" "$a"
expect bob "received from alice: Welcome back again.
received from alice: One more before your backup comes back.
received from alice: Noted." "$b"
if tail -n "+$((a + 1))" "$WORK/alice.log" | grep -E 'untrustedIdentity|CHANGED|not sent'; then fail "Alice was asked about Bob's restored device"; fi
if tail -n "+$((b + 1))" "$WORK/bob.log" | grep -E 'CHANGED|QUARANTINED'; then fail "Bob was asked about Alice after his restore"; fi
echo "  nobody was asked anything"
run bob history alice
expect bob "archived in alice: Bob, are you still there?" "$b"
expect bob "archived in alice: Welcome back again." "$b"

step "Bob's phone puts back an older copy of his database file: detected at open, nothing sent on the old chains"
stop bob
mkdir -p "$WORK/backup"
for f in "$WORK"/bob-restored.sqlite "$WORK"/bob-restored.sqlite-wal "$WORK"/bob-restored.sqlite-shm; do
    [ ! -e "$f" ] || cp "$f" "$WORK/backup/"
done
echo "  (a copy of bob-restored.sqlite taken; its key file stays where it is)"
start bob bob-restored.sqlite
run alice send bob One more before your backup comes back.
expect bob "received from alice: One more before your backup comes back."
run bob send alice Got it, on a chain the copy does not know.
expect alice "received from bob: Got it, on a chain the copy does not know."
stop bob
rm -f "$WORK"/bob-restored.sqlite-wal "$WORK"/bob-restored.sqlite-shm
cp "$WORK"/backup/* "$WORK/"
b=$(lines bob)
start bob bob-restored.sqlite
expect bob "is an older copy of itself" "$b"
a=$(lines alice)
run alice send bob Noted.
expect alice "refused by the relay: devices of bob stale [1]" "$a"
expect alice "re-sending 1 message(s) from the send log to bob.1 in the new session" "$a"
expect bob "received from alice: Noted." "$b"
run bob send alice Read you, from the old copy.
expect alice "received from bob: Read you, from the old copy."
if tail -n "+$((a + 1))" "$WORK/alice.log" | grep -E 'untrustedIdentity|CHANGED|not sent|could not be decrypted'; then fail "the restored copy cost a question or a message"; fi

step "Alice sends Carol a file as an attachment: the relay keeps only its ciphertext"
{
    echo "BOOK CLUB READING LIST (private)"
    for i in $(seq 1 2000); do echo "week $i: chapter $i of the book Carol recommended"; done
} > "$WORK/reading-list.txt"
run alice sendfile carol "$WORK/reading-list.txt"
expect alice "stored at the relay as"
expect carol "received a file from alice: reading-list.txt"
cmp -s "$WORK/reading-list.txt" "$WORK/carol-reinstalled.sqlite.files/reading-list.txt" || fail "Carol's file differs from Alice's"
stored=$(ls "$WORK/relay-attachments")
[ -n "$stored" ] || fail "the relay stored no attachment"
for file in "$WORK"/relay-attachments/*; do
    if grep -qF -e "BOOK CLUB READING LIST" -e "chapter 1 of the book" "$file"; then fail "plaintext in the relay's stored attachment $file"; fi
done
echo "  Carol's copy is identical ($(wc -c < "$WORK/reading-list.txt") bytes); the relay holds $(wc -c < "$WORK/relay-attachments/$stored") bytes of ciphertext without the text"

step "Everyone quits"
stop alice
stop bob
stop carol
kill "$RELAY_PID" && wait "$RELAY_PID" 2>/dev/null || true
RELAY_PID=""

# --- What each client received, and the checks -----------------------------------------------
declare -A EXPECTED
EXPECTED[alice]="received from bob: Hi Alice, got it.
received in book-club from carol: Yes, I will bring tea.
received in book-club from carol: Bob, we start at eight.
received from bob: Back, with the same sessions.
received from carol: Hi Alice, I reinstalled the app.
received from bob: Yes, I reinstalled. Got it.
received from bob: Got it, on a chain the copy does not know.
received from bob: Read you, from the old copy."
EXPECTED[bob]="received from alice: Hi Bob, this is Alice.
received in book-club from alice: Chapter 1 tonight?
received in book-club from carol: Yes, I will bring tea.
received from alice: Are you there?
received in book-club from carol: Bob, we start at eight.
received from alice: Bob, are you still there?
received from alice: Welcome back again.
received from alice: One more before your backup comes back.
received from alice: Noted."
EXPECTED[carol]="received in book-club from alice: Chapter 1 tonight?
received from alice: Welcome back, Carol."

step "What each client received"
problems=0
for name in alice bob carol; do
    echo "$name:"
    grep -E '^(received|new device|restarted|restored|identity key|exiting)' "$WORK/$name.log" | sed 's/^/  /'
    got=$(grep -E '^received (from|in) ' "$WORK/$name.log" | sort)
    want=$(echo "${EXPECTED[$name]}" | sort)
    if [ "$got" != "$want" ]; then
        echo "  MISMATCH for $name:" >&2
        diff <(echo "$want") <(echo "$got") | sed 's/^/    /' >&2 || true
        problems=1
    fi
    if grep -E '^(dropped|kept|failed|unknown command|chat-client:)' "$WORK/$name.log"; then problems=1; fi
done

# The relay saw envelopes only: none of the texts above appears in its log.
for name in alice bob carol; do
    while IFS= read -r line; do
        text=${line#*: }
        if grep -qF -- "$text" "$WORK/relay.log"; then
            echo "PLAINTEXT IN THE RELAY'S LOG: $text" >&2
            problems=1
        fi
    done < <(grep -E '^received (from|in) ' "$WORK/$name.log")
done
grep -q "last-resort KEM prekey" "$WORK/relay.log" || { echo "the relay never handed out a last-resort KEM prekey" >&2; problems=1; }

echo
echo "relay: $(grep -c '^relay: bundle of' "$WORK/relay.log") bundles handed out, $(grep -c '^relay: envelope' "$WORK/relay.log") envelopes relayed"
grep '^relay: bundle of' "$WORK/relay.log" | sed 's/^/  /'
[ "$problems" = 0 ] || fail "the received messages differ from the expected ones"
echo
echo "demo passed: every expected message arrived, nothing else did, and the relay saw only envelopes"
