;; An http-wasm guest that probes the host's bulk-memory instructions (see
;; xtask/src/plugins/lower.rs for what it proved in Traefik 3.7.15, whose wazero 1.8.0 runs them
;; through Go's memmove). `GET /<op>/<n>` runs one instruction on n bytes: op c = memory.copy
;; forward between distant regions, o = memory.copy onto the source shifted one byte up,
;; b = one byte down, f = memory.fill, d = memory.fill done as doubling memory.copy (an earlier,
;; insufficient lowering). The non-overlapping ops run three times in a loop. Values derived
;; from n and the round counter are live across the instruction and are also kept in memory;
;; the probe answers 200 "ok", or 500 "registers" when a live value changed, or "memory" when
;; the bytes written are wrong. Every other request goes to the next handler.
(module
  (import "http_handler" "get_uri" (func $get_uri (param i32 i32) (result i32)))
  (import "http_handler" "set_status_code" (func $set_status_code (param i32)))
  (import "http_handler" "write_body" (func $write_body (param i32 i32 i32)))
  (memory (export "memory") 40)
  (data (i32.const 0) "ok")
  (data (i32.const 16) "registers")
  (data (i32.const 32) "memory")
  (global $src i32 (i32.const 0x10000))
  (global $dst i32 (i32.const 0x120000))
  (func $answer (param $status i32) (param $at i32) (param $len i32) (result i64)
    (call $set_status_code (local.get $status))
    (call $write_body (i32.const 1) (local.get $at) (local.get $len))
    (i64.const 0))
  ;; memory.fill as the earlier lowering did it: one store, then doubling memory.copy
  (func $fill_by_copy (param $dest i32) (param $value i32) (param $len i32) (local $done i32)
    (if (i32.eqz (local.get $len)) (then return))
    (i32.store8 (local.get $dest) (local.get $value))
    (local.set $done (i32.const 1))
    (block $out (loop $more
      (br_if $out (i32.ge_u (local.get $done) (local.get $len)))
      (memory.copy (i32.add (local.get $dest) (local.get $done)) (local.get $dest)
        (select (local.get $done) (i32.sub (local.get $len) (local.get $done))
          (i32.lt_u (local.get $done) (i32.sub (local.get $len) (local.get $done)))))
      (local.set $done (select (i32.add (local.get $done) (local.get $done)) (local.get $len)
        (i32.lt_u (i32.add (local.get $done) (local.get $done)) (local.get $len))))
      (br $more))))
  (func (export "handle_request") (result i64)
    (local $len i32) (local $i i32) (local $n i32) (local $op i32) (local $src i32) (local $dst i32)
    (local $bad i32) (local $overlap i32)
    (local $a i64) (local $b i64) (local $c i64) (local $d i64) (local $e i64) (local $f i64)
    (local $g i64) (local $h i64) (local $j i64) (local $k i64) (local $l i64) (local $m i64)
    ;; the URI at 256: "/o/1234"
    (local.set $len (call $get_uri (i32.const 256) (i32.const 64)))
    (local.set $op (i32.load8_u (i32.const 257)))
    (if (i32.or (i32.lt_u (local.get $len) (i32.const 4))
          (i32.ne (i32.load8_u (i32.const 258)) (i32.const 47)))
      (then (return (i64.const 1))))
    (local.set $overlap (i32.or (i32.eq (local.get $op) (i32.const 111)) (i32.eq (local.get $op) (i32.const 98))))
    (local.set $i (i32.const 3))
    (block $done (loop $digits
      (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
      (local.set $n (i32.add (i32.mul (local.get $n) (i32.const 10))
        (i32.sub (i32.load8_u (i32.add (i32.const 256) (local.get $i))) (i32.const 48))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $digits)))
    ;; o: the destination one byte above the source, b: one byte below, else far apart
    (local.set $src (i32.add (global.get $src) (i32.eq (local.get $op) (i32.const 98))))
    (local.set $dst (select (i32.add (global.get $src) (i32.const 1))
      (select (global.get $src) (global.get $dst) (i32.eq (local.get $op) (i32.const 98)))
      (i32.eq (local.get $op) (i32.const 111))))
    ;; the source: byte i is i * 31 + 7
    (local.set $i (i32.const 0))
    (block $done (loop $fill
      (br_if $done (i32.ge_u (local.get $i) (i32.add (local.get $n) (i32.const 1))))
      (i32.store8 (i32.add (local.get $src) (local.get $i))
        (i32.add (i32.mul (local.get $i) (i32.const 31)) (i32.const 7)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $fill)))
    ;; twelve values live across the bulk instruction, kept at 512.. as well
    (local.set $a (i64.mul (i64.extend_i32_u (local.get $n)) (i64.const 3)))
    (local.set $b (i64.add (local.get $a) (i64.const 0x1111)))
    (local.set $c (i64.xor (local.get $b) (i64.const 0x2222_0000)))
    (local.set $d (i64.mul (local.get $c) (i64.const 5)))
    (local.set $e (i64.add (local.get $d) (i64.const 0x3333)))
    (local.set $f (i64.xor (local.get $e) (i64.const 0x4444_0000)))
    (local.set $g (i64.mul (local.get $f) (i64.const 7)))
    (local.set $h (i64.add (local.get $g) (i64.const 0x5555)))
    (local.set $j (i64.xor (local.get $h) (i64.const 0x6666_0000)))
    (local.set $k (i64.mul (local.get $j) (i64.const 11)))
    (local.set $l (i64.add (local.get $k) (i64.const 0x7777)))
    (local.set $m (i64.xor (local.get $l) (i64.const 0x8888_0000)))
    (i64.store (i32.const 512) (local.get $a)) (i64.store (i32.const 520) (local.get $b))
    (i64.store (i32.const 528) (local.get $c)) (i64.store (i32.const 536) (local.get $d))
    (i64.store (i32.const 544) (local.get $e)) (i64.store (i32.const 552) (local.get $f))
    (i64.store (i32.const 560) (local.get $g)) (i64.store (i32.const 568) (local.get $h))
    (i64.store (i32.const 576) (local.get $j)) (i64.store (i32.const 584) (local.get $k))
    (i64.store (i32.const 592) (local.get $l)) (i64.store (i32.const 600) (local.get $m))
    ;; three rounds: the round counter is live across the instruction too
    (local.set $i (i32.const 0))
    (loop $rounds
      (if (i32.eq (local.get $op) (i32.const 102))
        (then (memory.fill (local.get $dst) (i32.const 0xab) (local.get $n)))
        (else (if (i32.eq (local.get $op) (i32.const 100))
          (then (call $fill_by_copy (local.get $dst) (i32.const 0xab) (local.get $n)))
          (else (memory.copy (local.get $dst) (local.get $src) (local.get $n))))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $rounds (i32.and (i32.eqz (local.get $overlap)) (i32.lt_u (local.get $i) (i32.const 3)))))
    (if (i32.ne (local.get $i) (select (i32.const 1) (i32.const 3) (local.get $overlap)))
      (then (return (call $answer (i32.const 500) (i32.const 16) (i32.const 9)))))
    (local.set $bad (i32.or (i32.or (i32.or
      (i32.or (i64.ne (local.get $a) (i64.load (i32.const 512))) (i64.ne (local.get $b) (i64.load (i32.const 520))))
      (i32.or (i64.ne (local.get $c) (i64.load (i32.const 528))) (i64.ne (local.get $d) (i64.load (i32.const 536)))))
      (i32.or
      (i32.or (i64.ne (local.get $e) (i64.load (i32.const 544))) (i64.ne (local.get $f) (i64.load (i32.const 552))))
      (i32.or (i64.ne (local.get $g) (i64.load (i32.const 560))) (i64.ne (local.get $h) (i64.load (i32.const 568))))))
      (i32.or
      (i32.or (i64.ne (local.get $j) (i64.load (i32.const 576))) (i64.ne (local.get $k) (i64.load (i32.const 584))))
      (i32.or (i64.ne (local.get $l) (i64.load (i32.const 592))) (i64.ne (local.get $m) (i64.load (i32.const 600)))))))
    (if (local.get $bad) (then (return (call $answer (i32.const 500) (i32.const 16) (i32.const 9)))))
    ;; the destination: byte i is what the source had (i * 31 + 7), or 0xab for a fill
    (local.set $i (i32.const 0))
    (block $done (loop $check
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (if (i32.ne (i32.load8_u (i32.add (local.get $dst) (local.get $i)))
            (select (i32.const 0xab)
              (i32.and (i32.add (i32.mul (local.get $i) (i32.const 31)) (i32.const 7)) (i32.const 0xff))
              (i32.or (i32.eq (local.get $op) (i32.const 102)) (i32.eq (local.get $op) (i32.const 100)))))
        (then (return (call $answer (i32.const 500) (i32.const 32) (i32.const 6)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $check)))
    (call $answer (i32.const 200) (i32.const 0) (i32.const 2)))
  (func (export "handle_response") (param i32 i32)))
