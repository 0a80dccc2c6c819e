#!/usr/bin/env bats
# gator.bats - apcserve and apcrecord end to end on 127.0.0.1: a capture
# served and recorded comes back byte for byte; the protocol's error
# paths as a client sees them.  apcserve picks a free port (--port 0)
# and prints it; every process runs under `timeout` and is killed in
# teardown.

load helpers

# gatord 6.8 captures, served as they are (sleep_counters.apc is 9.x: converted)
CAPS="v68_nonroot.apc v68_sleep.apc v68_nonroot_annotate.apc"

setup() {
	TMP="$(mktemp -d)"
	SERVE_PID=
	PEER_PID=
}

teardown() {
	if [ -n "$PEER_PID" ]; then
		kill "$PEER_PID" 2>/dev/null || true
		wait "$PEER_PID" 2>/dev/null || true
	fi
	if [ -n "$SERVE_PID" ]; then
		kill "$SERVE_PID" 2>/dev/null || true
		wait "$SERVE_PID" 2>/dev/null || true
	fi
	rm -rf "$TMP"
}

apcserve() { "$APC_BIN/apcserve" "$@"; }
apcrecord() { timeout -k 10 60 "$APC_BIN/apcrecord" "$@"; }

# serve CAPTURE [OPTIONS]: start apcserve in the background on a free
# port; sets PORT and SERVE_PID.
serve() {
	: >"$TMP/serve.log"
	timeout -k 10 120 "$APC_BIN/apcserve" --port 0 "$@" 2>"$TMP/serve.log" 3>&- &
	SERVE_PID=$!
	PORT=
	for _ in $(seq 100); do
		PORT=$(sed -n 's/.*listening on .* port \([0-9][0-9]*\)$/\1/p' "$TMP/serve.log")
		[ -n "$PORT" ] && return 0
		kill -0 "$SERVE_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$TMP/serve.log" >&2
	return 1
}

# fake_peer silent|junk: a scripted peer on a free port that accepts one
# connection and then says nothing, or a junk line every 0.5 s; sets
# PORT and PEER_PID (killed in teardown).
fake_peer() {
	: >"$TMP/peer.port"
	timeout -k 5 60 python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); sys.stdout.close()
c, _ = s.accept()
for _ in range(100):
    if sys.argv[1] == "junk":
        c.sendall(b"junk\n")
    time.sleep(0.5)' "$1" >"$TMP/peer.port" 3>&- &
	PEER_PID=$!
	for _ in $(seq 50); do [ -s "$TMP/peer.port" ] && break; sleep 0.1; done
	PORT=$(cat "$TMP/peer.port")
	[ -n "$PORT" ]
}

# Wait (bounded) for the --once server to exit; its status in SERVE_STATUS.
serve_wait() {
	SERVE_STATUS=0
	wait "$SERVE_PID" || SERVE_STATUS=$?
	SERVE_PID=
}

@test "every real capture comes back byte for byte (data, captured.xml, events.xml)" {
	need_shared
	for c in $CAPS; do
		[ -d "$SHARED/apc/$c" ] || skip "$c is absent"
		serve "$SHARED/apc/$c" --once
		exits 0 apcrecord "127.0.0.1:$PORT" -o "$TMP/$c"
		[[ "$output" == *"frames"* ]]
		serve_wait
		[ "$SERVE_STATUS" -eq 0 ]
		cmp "$SHARED/apc/$c/0000000000" "$TMP/$c/0000000000"
		cmp "$SHARED/apc/$c/captured.xml" "$TMP/$c/captured.xml"
		cmp "$SHARED/apc/$c/events.xml" "$TMP/$c/events.xml"
		grep -q '<session ' "$TMP/$c/session.xml"
	done
	# And the listings agree, as apcdump sees them.
	apcdump "$SHARED/apc/v68_nonroot.apc" >"$TMP/a.txt"
	apcdump "$TMP/v68_nonroot.apc" >"$TMP/b.txt"
	diff "$TMP/a.txt" "$TMP/b.txt"
}

@test "a gatord 9.x capture is converted to protocol 680 before it is served, as apcconv converts it" {
	need_shared
	c="$SHARED/apc/sleep_counters.apc"
	[ -d "$c" ] || skip "sleep_counters.apc is absent"
	grep -q 'protocol="950"' "$c/captured.xml"
	apcconv "$c" -o "$TMP/conv.apc" -q
	serve "$c" --once
	exits 0 apcrecord "127.0.0.1:$PORT" -o "$TMP/rec.apc"
	serve_wait
	[ "$SERVE_STATUS" -eq 0 ]
	grep -q "gatord 9.x perf frames (not expressible at protocol 680): 17" "$TMP/serve.log"
	grep -q ": converted, listening on" "$TMP/serve.log"
	grep -q 'protocol="680"' "$TMP/rec.apc/captured.xml"
	cmp "$TMP/conv.apc/0000000000" "$TMP/rec.apc/0000000000"
	cmp "$TMP/conv.apc/captured.xml" "$TMP/rec.apc/captured.xml"
}

@test "a converted Barman capture comes back byte for byte, also converted on the fly" {
	apcconv "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/conv.apc" -q
	serve "$TMP/conv.apc" --once
	exits 0 apcrecord "127.0.0.1:$PORT" -o "$TMP/rec1.apc"
	serve_wait
	cmp "$TMP/conv.apc/0000000000" "$TMP/rec1.apc/0000000000"
	cmp "$TMP/conv.apc/captured.xml" "$TMP/rec1.apc/captured.xml"
	# The raw Barman file: apcserve converts it itself, into its own temporary folder.
	serve "$APC_ROOT/testdata/barman/demo.bin" --once
	grep -q "converted" "$TMP/serve.log"
	exits 0 apcrecord "127.0.0.1:$PORT" -o "$TMP/rec2.apc"
	serve_wait
	cmp "$TMP/conv.apc/0000000000" "$TMP/rec2.apc/0000000000"
	[ "$(apcverify -q "$TMP/rec2.apc"; echo $?)" -eq 0 ]
}

@test "--list-counters prints the counters and events the agent offers" {
	apcconv "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/conv.apc" -q
	serve "$TMP/conv.apc"
	exits 0 apcrecord "127.0.0.1:$PORT" --list-counters
	[ "${lines[0]}" = "Counters:" ]
	# Every counter type of captured.xml is offered.
	for t in $(sed -n 's/.*<counter key=.* type="\([^"]*\)".*/\1/p' "$TMP/conv.apc/captured.xml"); do
		[[ "$output" == *"  $t"* ]]
	done
	[[ "$output" == *"Events:"* ]]
	# apcserve serves again after a listing (no --once).
	exits 0 apcrecord "127.0.0.1:$PORT" --counters=ARMv8_Cortex_A53_ccnt -o "$TMP/again.apc"
	cmp "$TMP/conv.apc/0000000000" "$TMP/again.apc/0000000000"
}

@test "apcrecord: refused connection and existing output exit 2 and write nothing" {
	# A port that was free a moment ago: bind port 0, note it, close it.
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	exits 2 apcrecord "127.0.0.1:$port" -o "$TMP/none.apc" --timeout=2
	# PROG: FILE: message, lowercase; the address is the FILE, once
	[ "$output" = "apcrecord: 127.0.0.1:$port: cannot connect: connection refused" ]
	[ ! -e "$TMP/none.apc" ]
	exits 2 apcrecord "127.0.0.1:bad" -o "$TMP/none.apc"
	mkdir "$TMP/exists.apc"
	exits 2 apcrecord "127.0.0.1:$port" -o "$TMP/exists.apc"
	[ "$output" = "apcrecord: $TMP/exists.apc: output exists (use --overwrite to replace it)" ]
	echo keep > "$TMP/exists.apc/notes"
	exits 2 apcrecord --overwrite "127.0.0.1:$port" -o "$TMP/exists.apc"
	[ "$output" = "apcrecord: $TMP/exists.apc: output exists and is not an .apc capture (no captured.xml, no 0000000000): not replaced (remove it first)" ]
	[ "$(cat "$TMP/exists.apc/notes")" = keep ]
	exits 2 apcrecord
	exits 2 apcrecord --bogus
	[ "$output" = "apcrecord: unrecognized option '--bogus'
Try 'apcrecord --help' for more information." ]
}

@test "apcrecord: a signal before APC Start ends the run at once; the magic exchange has one deadline" {
	command -v python3 >/dev/null || skip "python3 not available"
	for peer in silent junk; do
		for sig in INT TERM HUP; do
			fake_peer $peer
			start=$(date +%s)
			timeout -k 5 40 "$APC_BIN/apcrecord" --timeout=30 "127.0.0.1:$PORT" -o "$TMP/s.apc" 2>"$TMP/rec.log" 3>&- &
			rec=$!
			sleep 1
			kill -$sig "$rec"
			st=0; wait "$rec" || st=$?
			cat "$TMP/rec.log"
			[ "$st" -eq 2 ]
			[ $(($(date +%s) - start)) -le 4 ]
			[ "$(cat "$TMP/rec.log")" = "apcrecord: 127.0.0.1:$PORT: interrupted" ]
			# nothing left behind: no capture, no temporary folder
			[ "$(ls -A "$TMP" | grep -v -e '^peer.port$' -e '^rec.log$' || true)" = "" ]
			kill "$PEER_PID" 2>/dev/null || true
			wait "$PEER_PID" 2>/dev/null || true
			PEER_PID=
		done
	done
	# A peer that talks junk forever still times out, in the option's unit.
	fake_peer junk
	start=$(date +%s)
	exits 2 apcrecord --timeout=2 "127.0.0.1:$PORT" -o "$TMP/s.apc"
	[ $(($(date +%s) - start)) -le 5 ]
	[ "$output" = "apcrecord: 127.0.0.1:$PORT: no magic from the peer within 2 s" ]
	[ ! -e "$TMP/s.apc" ]
}

@test "apcrecord: output names follow apcconv's rules; errors name the output as given" {
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	cd "$TMP"
	exits 2 apcrecord "127.0.0.1:$port" -o -
	[ "$output" = "apcrecord: -: cannot record to stdout: a recording is an .apc folder (record to NAME.apc, then apcconv NAME.apc -o - for a tar stream)" ]
	exits 2 apcrecord "127.0.0.1:$port" -o out.apc.zip
	[ "$output" = "apcrecord: out.apc.zip: cannot record into an archive: a recording is an .apc folder (record to NAME.apc, then apcconv NAME.apc -o out.apc.zip)" ]
	exits 2 apcrecord "127.0.0.1:$port" -o x.TAR.GZ
	[[ "$output" == "apcrecord: x.TAR.GZ: cannot record into an archive"* ]]
	for o in . .. sub/. ./; do
		exits 2 apcrecord "127.0.0.1:$port" -o "$o"
		[ "$output" = "apcrecord: $o: not a usable output name" ]
	done
	exits 2 apcrecord "127.0.0.1:$port" -o "$TMP/nonexistent/x.apc"
	[ "$output" = "apcrecord: $TMP/nonexistent/x.apc: cannot create: no such file or directory" ]
	# nothing was made
	[ -z "$(ls -A "$TMP")" ]
}

@test "apcrecord: a 240-byte output name records (its temporary folder fits)" {
	n=$(printf 'r%.0s' $(seq 1 240))
	mkdir "$TMP/d"
	serve "$APC_ROOT/testdata/barman/demo.bin" --once
	exits 0 apcrecord "127.0.0.1:$PORT" -o "$TMP/d/$n.apc"
	serve_wait
	verify 0 "$TMP/d/$n.apc"
	[ "$(ls -A "$TMP/d")" = "$n.apc" ]
}

@test "apcrecord: bad session values fail before connecting; unknown counters are named; --progress into a log is whole lines" {
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	# usage errors: the --help hint follows, as after a bad number
	exits 2 apcrecord "127.0.0.1:$port" -o "$TMP/x.apc" --sample-rate=bogus
	[ "$output" = "apcrecord: invalid sample rate 'bogus' (high, normal, low or none)
Try 'apcrecord --help' for more information." ]
	exits 2 apcrecord "127.0.0.1:$port" -o "$TMP/x.apc" --buffer-mode=bogus
	[ "$output" = "apcrecord: invalid buffer mode 'bogus' (streaming, large, medium or small)
Try 'apcrecord --help' for more information." ]
	need_shared
	serve "$SHARED/apc/v68_nonroot.apc" --once
	apcrecord "127.0.0.1:$PORT" -o "$TMP/c.apc" --counters=NoSuchCounter,Other:3 --progress 2>"$TMP/rec.log"
	serve_wait
	cat "$TMP/rec.log"
	grep -qx "apcrecord: 127.0.0.1:$PORT: warning: the agent does not offer NoSuchCounter, Other (see --list-counters)" "$TMP/rec.log"
	# stderr is a file: no carriage returns, no escape sequences
	[ "$(tr -cd '\r\033' <"$TMP/rec.log" | wc -c)" -eq 0 ]
}

@test "apcserve: SIGHUP removes the converted temporary folder; -q keeps only the listening line" {
	mkdir "$TMP/t"
	TMPDIR="$TMP/t" serve "$APC_ROOT/testdata/barman/demo.bin" -q
	[ "$(wc -l <"$TMP/serve.log")" -eq 1 ]
	grep -q "listening on" "$TMP/serve.log"
	[ -n "$(ls -A "$TMP/t")" ]
	kill -HUP $(pgrep -P "$SERVE_PID")
	serve_wait
	[ "$SERVE_STATUS" -eq 0 ]
	[ -z "$(ls -A "$TMP/t")" ]
	apcserve --help | grep -q -- "-q, --quiet           only the listening line and errors"
}

@test "--duration stops a paced capture early; it still ends with End of Sequence" {
	need_shared
	serve "$SHARED/apc/v68_nonroot.apc" --once --realtime
	start=$(date +%s)
	run apcrecord "127.0.0.1:$PORT" -o "$TMP/short.apc" -d 1
	end=$(date +%s)
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"(stopped)"* ]]
	[ $((end - start)) -lt 4 ]
	full=$(stat -c %s "$SHARED/apc/v68_nonroot.apc/0000000000")
	part=$(stat -c %s "$TMP/short.apc/0000000000")
	[ "$part" -gt 0 ]
	[ "$part" -lt "$full" ]
	# What arrived is a prefix of the capture, frame for frame.
	cmp -n "$part" "$SHARED/apc/v68_nonroot.apc/0000000000" "$TMP/short.apc/0000000000"
	serve_wait
}

@test "SIGINT stops apcrecord cleanly; an agent killed mid-capture exits 1 and keeps what arrived" {
	need_shared
	serve "$SHARED/apc/v68_nonroot.apc" --once --realtime
	timeout -k 10 30 "$APC_BIN/apcrecord" "127.0.0.1:$PORT" -o "$TMP/int.apc" 2>"$TMP/rec.log" 3>&- &
	rec=$!
	sleep 1.5
	kill -INT "$rec"
	st=0; wait "$rec" || st=$?
	cat "$TMP/rec.log"
	[ "$st" -eq 0 ]
	grep -q "(stopped)" "$TMP/rec.log"
	[ -s "$TMP/int.apc/0000000000" ]
	serve_wait

	serve "$SHARED/apc/v68_nonroot.apc" --once --realtime
	timeout -k 10 30 "$APC_BIN/apcrecord" "127.0.0.1:$PORT" -o "$TMP/cut.apc" 2>"$TMP/rec.log" 3>&- &
	rec=$!
	sleep 1.5
	# SERVE_PID is `timeout`; kill the agent itself, as a crash would.
	kill -KILL $(pgrep -P "$SERVE_PID")
	serve_wait
	st=0; wait "$rec" || st=$?
	cat "$TMP/rec.log"
	[ "$st" -eq 1 ]
	grep -q "cut short" "$TMP/rec.log"
	[ -s "$TMP/cut.apc/0000000000" ]
}

@test "apcserve speaks like gatord 6.8: junk before the magic, Error on unknown commands, busy" {
	need_shared
	command -v python3 >/dev/null || skip "python3 not available"
	serve "$SHARED/apc/v68_nonroot.apc" --realtime
	run timeout -k 10 30 python3 - "$PORT" <<'EOF'
import socket, struct, sys, time
port = int(sys.argv[1])
def conn(magic=b"junk\r\nVERSION 680\r\nSTREAMLINE\r\n"):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(magic)
    line = b""
    while not line.endswith(b"\n"):
        line += s.recv(1)
    assert line == b"GATOR 680\n", line
    return s
def recvn(s, n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise EOFError
        b += c
    return b
def resp(s):
    code, n = struct.unpack("<Bi", recvn(s, 5))
    return code, recvn(s, n)
def cmd(s, code, body=b""):
    s.sendall(struct.pack("<Bi", code, len(body)) + body)
# Unknown command before Start: Error, then the agent closes.
s = conn()
cmd(s, 9)
assert resp(s) == (0xff, b"Unknown command type, 9")
assert s.recv(1) == b""
# Over-long command: Error.
s = conn(b"STREAMLINE\n")
s.sendall(struct.pack("<Bi", 0, 2 << 20))
assert resp(s) == (0xff, b"Invalid length received, 2097152")
# A capture in progress turns a second connection away.
a = conn()
cmd(a, 2)
code, body = resp(a)
assert code == 3 and len(body) > 0
b = conn(b"STREAMLINE\n")
assert resp(b) == (0xff, b"Session already in progress")
# Ping is ACKed between frames; Stop ends with End of Sequence.
cmd(a, 5)
cmd(a, 3)
acks = 0
while True:
    code, body = resp(a)
    if code == 4:
        acks += 1
    elif code == 3 and not body:
        break
assert acks == 1
assert a.recv(1) == b""
print("ok")
EOF
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${lines[-1]}" = "ok" ]
}

@test "apcserve reports the conversion as apcconv does: damage, summary, exit status" {
	need_shared
	head -c 20000 "$SHARED/barman/capture1_linear64.bin" >"$TMP/cut.bin"
	run apcconv "$TMP/cut.bin" -o "$TMP/cut.apc"
	[ "$status" -eq 1 ]
	conv_damage="${lines[0]#apcconv: }"
	[[ "$conv_damage" == *"data area truncated"* ]]
	serve "$TMP/cut.bin" --once
	exits 0 apcrecord "127.0.0.1:$PORT" -o "$TMP/rec.apc"
	serve_wait
	cat "$TMP/serve.log"
	# the damage, then the summary line, then the listening line
	[ "$(sed -n 1p "$TMP/serve.log")" = "apcserve: $conv_damage" ]
	[[ "$(sed -n 2p "$TMP/serve.log")" == "apcserve: $TMP/cut.bin (barman) -> the served capture: "* ]]
	[[ "$(sed -n 3p "$TMP/serve.log")" == *"converted, listening on"* ]]
	cmp "$TMP/cut.apc/0000000000" "$TMP/rec.apc/0000000000"
	# Nothing converts: apcconv's cause and exit status, no temporary folder named.
	head -c 1000 "$SHARED/barman/capture1_linear64.bin" >"$TMP/bc.bin"
	run timeout -k 5 20 "$APC_BIN/apcserve" --port 0 "$TMP/bc.bin"
	echo "$output"
	[ "$status" -eq 1 ]
	[[ "${lines[0]}" == "apcserve: $TMP/bc.bin: offset 0x0: file ends inside the barman header"* ]]
	[[ "$output" != *apcserve-* ]]
	[[ "$output" != *listening* ]]
	echo text >"$TMP/text.txt"
	exits 2 timeout -k 5 20 "$APC_BIN/apcserve" --port 0 "$TMP/text.txt"
	[ "$output" = "apcserve: $TMP/text.txt: cannot tell the input format (try -f FORMAT; see --list-formats)" ]
	# and the options that hint names exist
	exits 1 timeout -k 5 20 "$APC_BIN/apcserve" --port 0 -f barman "$TMP/text.txt"
	[[ "$output" == *"no barman magic"* ]]
	[ "$(apcserve --list-formats)" = "$(apcconv --list-formats)" ]
}

@test "apcserve: bad capture or port exit 2" {
	exits 2 apcserve "$TMP/missing.apc" --port 0
	exits 2 apcserve --port 99999 x
	exits 2 apcserve
	bad_option apcserve
}

@test "apcserve: a port in use is named as the FILE of a lowercase system error, exit 2" {
	command -v python3 >/dev/null || skip "python3 not available"
	# hold a port for the test's length, listening, so bind fails
	python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); sys.stdout.close(); time.sleep(30)' >"$TMP/port" 3>&- &
	holder=$!
	for _ in $(seq 50); do [ -s "$TMP/port" ] && break; sleep 0.1; done
	port=$(cat "$TMP/port")
	run timeout -k 5 20 "$APC_BIN/apcserve" --port "$port" "$APC_ROOT/testdata/barman/demo.bin"
	kill "$holder" 2>/dev/null || true
	wait "$holder" 2>/dev/null || true
	[ "$status" -eq 2 ]
	[ "$output" = "apcserve: 127.0.0.1:$port: cannot listen: address already in use" ]
}

@test "apcrecord: bad numbers name the option or the port, quote the value, and give the --help hint" {
	rec() { exits 2 "$APC_BIN/apcrecord" "$@"; }
	rec -d 1.5 h -o "$TMP/o.apc"
	[ "$output" = "apcrecord: --duration: '1.5' is not a count of seconds (a whole number, 0 to 31622400; 0: until the agent ends)
Try 'apcrecord --help' for more information." ]
	rec --duration=10s h -o "$TMP/o.apc"
	[ "${lines[0]}" = "apcrecord: --duration: '10s' is not a count of seconds (a whole number, 0 to 31622400; 0: until the agent ends)" ]
	rec --timeout=0 h -o "$TMP/o.apc"
	[ "$output" = "apcrecord: --timeout: '0' is not a count of seconds (a whole number, 1 to 86400)
Try 'apcrecord --help' for more information." ]
	rec 127.0.0.1:bad -o "$TMP/o.apc"
	[ "$output" = "apcrecord: 127.0.0.1:bad: 'bad' is not a port number (a whole number, at most 65535)
Try 'apcrecord --help' for more information." ]
	rec '[::1]:99999' -o "$TMP/o.apc"
	[ "${lines[0]}" = "apcrecord: [::1]:99999: '99999' is not a port number (a whole number, at most 65535)" ]
	rec :80 -o "$TMP/o.apc"
	[ "${lines[0]}" = "apcrecord: :80: invalid address (use HOST[:PORT])" ]
	[ ! -e "$TMP/o.apc" ]
}

@test "apcrecord -v says how the session went after the summary; -q keeps it quiet" {
	"$APC_BIN/apcconv" -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/served.apc"
	serve "$TMP/served.apc"
	run timeout -k 5 60 "$APC_BIN/apcrecord" "127.0.0.1:$PORT" -o "$TMP/r1.apc"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == "apcrecord: 127.0.0.1:$PORT: "*" frames, "*" -> $TMP/r1.apc" ]]
	run timeout -k 5 60 "$APC_BIN/apcrecord" -v "127.0.0.1:$PORT" -o "$TMP/r2.apc"
	echo "$output"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" == "apcrecord: 127.0.0.1:$PORT: agent protocol 680; "*" answered; the agent ended the data (End of Sequence)" ]]
	run timeout -k 5 60 "$APC_BIN/apcrecord" --verbose -q "127.0.0.1:$PORT" -o "$TMP/r3.apc"
	[ "$status" -eq 0 ]
	[ -z "$output" ]
	apcverify -q "$TMP/r2.apc"
}

@test "apcrecord: a bad --session file is named, with its line and offset, exit 2 before connecting" {
	# nothing listens there: a connection tried first would say so
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	# not well-formed (an events.xml cut inside a start tag): apcconv's words
	printf '<?xml version="1.0"?>\n<events>\n  <category name="x">\n    <event counter="a" title="t" name="n"/>\n    <event counter="b" title="t" name="n"\n  </category>\n</events>\n' >"$TMP/bad.xml"
	exits 2 apcrecord --session="$TMP/bad.xml" "127.0.0.1:$port" -o "$TMP/x.apc"
	[ "$output" = "apcrecord: $TMP/bad.xml: offset 0x8d: line 6: not well-formed XML: couldn't find end of Start Tag event" ]
	# well-formed, but not a session
	printf '<?xml version="1.0"?>\n<events/>\n' >"$TMP/ev.xml"
	exits 2 apcrecord --session="$TMP/ev.xml" "127.0.0.1:$port" -o "$TMP/x.apc"
	[ "$output" = "apcrecord: $TMP/ev.xml: not a session XML: the root element is <events>, not <session>" ]
	# a value the agent would refuse, in the user's words, not gatord's reply
	printf '<?xml version="1.0"?>\n<session version="1"\n  sample_rate="fast"/>\n' >"$TMP/rate.xml"
	exits 2 apcrecord --session="$TMP/rate.xml" "127.0.0.1:$port" -o "$TMP/x.apc"
	[ "$output" = "apcrecord: $TMP/rate.xml: line 3: invalid sample_rate 'fast' (high, normal, low or none)" ]
	printf '<session duration="1.5"/>' >"$TMP/dur.xml"
	exits 2 apcrecord --session="$TMP/dur.xml" "127.0.0.1:$port" -o "$TMP/x.apc"
	[ "$output" = "apcrecord: $TMP/dur.xml: line 1: invalid duration '1.5' (a whole number of seconds, 0 to 31622400)" ]
	: >"$TMP/empty.xml"
	exits 2 apcrecord --session="$TMP/empty.xml" "127.0.0.1:$port" -o "$TMP/x.apc"
	[ "$output" = "apcrecord: $TMP/empty.xml: empty file, not XML" ]
	[ ! -e "$TMP/x.apc" ]
}

@test "apcrecord: a session file as Streamline writes it passes the check and is delivered as it is" {
	"$APC_BIN/apcconv" -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/served.apc"
	# as Streamline writes one, with a declaration and a closing tag
	printf '<?xml version="1.0" encoding="US-ASCII" ?>\n<session version="1" call_stack_unwinding="no" parse_debug_info="no" high_resolution="no" buffer_mode="streaming" sample_rate="normal" duration="30">\n</session>\n' >"$TMP/s.xml"
	serve "$TMP/served.apc" --once
	exits 0 apcrecord --session="$TMP/s.xml" "127.0.0.1:$PORT" -o "$TMP/r.apc"
	serve_wait
	cmp "$TMP/s.xml" "$TMP/r.apc/session.xml"
	cmp "$TMP/served.apc/0000000000" "$TMP/r.apc/0000000000"
}

@test "apcrecord: a bad --counters list names the option and the item, with the --help hint, before connecting" {
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	hint="Try 'apcrecord --help' for more information."
	exits 2 apcrecord --counters=a,,b "127.0.0.1:$port" -o "$TMP/x.apc"
	[ "$output" = "apcrecord: --counters: empty counter name at item 2 (use NAME[:EVENT],...)
$hint" ]
	exits 2 apcrecord --counters=a, "127.0.0.1:$port" -o "$TMP/x.apc"
	[ "${lines[0]}" = "apcrecord: --counters: empty counter name at item 2 (use NAME[:EVENT],...)" ]
	exits 2 apcrecord --counters= "127.0.0.1:$port" -o "$TMP/x.apc"
	[ "${lines[0]}" = "apcrecord: --counters: empty counter list (use NAME[:EVENT],...)" ]
	exits 2 apcrecord --counters=a:3,b:-1 "127.0.0.1:$port" -o "$TMP/x.apc"
	[ "${lines[0]}" = "apcrecord: --counters: item 2: event '-1' is not an event number (0 to 4294967295, decimal or 0x hex)" ]
	[ "${lines[1]}" = "$hint" ]
	exits 2 apcrecord --counters=a:0x100000000 "127.0.0.1:$port" -o "$TMP/x.apc"
	[[ "${lines[0]}" == "apcrecord: --counters: item 1: event '0x100000000' is not an event number"* ]]
	[ ! -e "$TMP/x.apc" ]
}

@test "apcserve: -f is checked: an unknown name exits 2 before listening, a format the capture is not fails as apcconv fails" {
	"$APC_BIN/apcconv" -q "$APC_ROOT/testdata/barman/demo.bin" -o "$TMP/c.apc"
	# a protocol-680 capture, served as it is without -f
	grep -q 'protocol="680"' "$TMP/c.apc/captured.xml"
	exits 2 timeout -k 5 20 "$APC_BIN/apcserve" --port 0 -f nosuch "$TMP/c.apc"
	[ "$output" = "apcserve: unknown format 'nosuch' (see --list-formats)" ]
	run apcconv -f nosuch "$TMP/c.apc" -o "$TMP/x.apc"
	[ "$output" = "apcconv: unknown format 'nosuch' (see --list-formats)" ]
	for f in barman ltt annotate tptp-xml; do
		run apcconv -f "$f" "$TMP/c.apc" -o "$TMP/x.apc"
		conv_status=$status conv_out=${output#apcconv: }
		[ "$conv_status" -ne 0 ]
		run timeout -k 5 20 "$APC_BIN/apcserve" --port 0 -f "$f" "$TMP/c.apc"
		echo "$output"
		[ "$status" -eq "$conv_status" ]
		[ "${lines[0]#apcserve: }" = "$conv_out" ]
		[[ "$output" != *listening* ]]
	done
	# -f apc is what it is: served as it is, not converted
	serve "$TMP/c.apc" -f apc --once
	grep -q ": listening on" "$TMP/serve.log"
	! grep -q "converted" "$TMP/serve.log"
	exits 0 apcrecord "127.0.0.1:$PORT" -o "$TMP/rec.apc"
	serve_wait
	cmp "$TMP/c.apc/0000000000" "$TMP/rec.apc/0000000000"
}

@test "apcserve: bad -p and --timeout name the option, quote the value, and give the --help hint" {
	hint="Try 'apcserve --help' for more information."
	exits 2 apcserve -p 99999 x
	[ "$output" = "apcserve: --port: '99999' is not a port number (a whole number, at most 65535; 0 picks a free one)
$hint" ]
	exits 2 apcserve --port=http x
	[ "${lines[1]}" = "$hint" ]
	exits 2 apcserve --timeout=0 x
	[ "$output" = "apcserve: --timeout: '0' is not a count of seconds (a whole number, 1 to 86400)
$hint" ]
	exits 2 apcserve --timeout=1.5 x
	[ "${lines[1]}" = "$hint" ]
}
