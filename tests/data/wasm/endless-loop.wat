;; A hostile guest: `check` with `no-defaults` loops forever.
;;
;; Fuel (or the epoch deadline) must stop it.
;; It exports the whole `svclab:policy` world (wit/policy.wit), so the host accepts it; every call
;; answers `ok` except `check` with `no-defaults`, which never returns.
(component
  (core module $m
    (memory (export "memory") 1)
    (global $bump (mut i32) (i32.const 1024))
    ;; A bump allocator: enough for the host to pass arguments in.
    (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
      (local $ptr i32)
      (local.set $ptr (global.get $bump))
      (global.set $bump
        (i32.and (i32.add (i32.add (global.get $bump) (local.get 3)) (i32.const 7)) (i32.const -8)))
      (local.get $ptr))
    (data (i32.const 100) "ok")
    ;; Writes `ok("ok")` to the return area at 16 (tag, then the string's pointer and length).
    (func $ok (result i32)
      (i32.store8 (i32.const 16) (i32.const 0))
      (i32.store (i32.const 20) (i32.const 100))
      (i32.store (i32.const 24) (i32.const 2))
      (i32.const 16))
    (func (export "abi-version") (result i32) (i32.const 6))
    ;; Parameters: the inputs list (pointer, length), then `check-options` flattened:
    ;; `no-defaults` (parameter 2), `policy` (tag, name, text), `user-info` (tag, username,
    ;; groups), `explain-release` and `omit-rules`.
    (func (export "check") (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32)
      (if (local.get 2)
        (then
          (loop $forever (br $forever))))
      (call $ok))
    ;; Writes `ok([])` (an empty list) to the return area.
    (func $empty (result i32)
      (i32.store8 (i32.const 16) (i32.const 0))
      (i32.store (i32.const 20) (i32.const 8))
      (i32.store (i32.const 24) (i32.const 0))
      (i32.const 16))
    (func (export "diagnose") (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32) (call $empty))
    (func (export "render") (param i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32) (call $ok))
    ;; Parameters: the inputs list, then `upgrade-options` flattened: `to` (pointer, length),
    ;; `proxy-mode` (tag, value), `to-profile` (tag, name, text) and `diff`.
    (func (export "upgrade") (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32) (call $ok))
    (func (export "render-begin") (param i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32) (call $ok))
    ;; Writes `none` to the return area at 4000: no pieces.
    (func (export "render-next") (result i32)
      (i32.store8 (i32.const 4000) (i32.const 0))
      (i32.const 4000))
    (func (export "trace")
      (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32) (call $ok))
    ;; Parameters: the review, then `admission-options` flattened (16 in all, the most that
    ;; the canonical ABI passes flat).
    (func (export "validate-admission") (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32) (call $ok))
    (func (export "check-settings") (param i32 i32 i32 i32) (result i32) (call $empty))
    ;; Writes the string "ok" (pointer and length) to the return area at 32.
    (func (export "settings-schema") (result i32)
      (i32.store (i32.const 32) (i32.const 100))
      (i32.store (i32.const 36) (i32.const 2))
      (i32.const 32))
    ;; `svclab test` (ABI 6): present so the guest exports the whole world; never called.
    (func (export "test-files") (param i32 i32) (result i32) (unreachable))
    (func (export "run-tests") (param i32 i32 i32 i32 i32) (result i32) (unreachable))
    (func (export "test-schema") (result i32) (unreachable))
  )
  (core instance $i (instantiate $m))

  (type $input' (record (field "name" string) (field "text" string)))
  (export $input "input" (type $input'))
  (type $user-info' (record (field "username" string) (field "groups" (list string))))
  (export $user-info "user-info" (type $user-info'))
  (type $check-options'
    (record
      (field "no-defaults" bool)
      (field "policy" (option $input))
      (field "user-info" (option $user-info))
      (field "explain-release" bool)
      (field "omit-rules" bool)))
  (export $check-options "check-options" (type $check-options'))
  (type $admission-options'
    (record
      (field "policy" (option $input))
      (field "profile" (option $input))
      (field "stringly-typed" bool)
      (field "inventory" (option (list string)))))
  (export $admission-options "admission-options" (type $admission-options'))
  (type $proxy-mode' (enum "iptables" "nftables"))
  (export $proxy-mode "proxy-mode" (type $proxy-mode'))
  (type $ip-family' (enum "ipv4" "ipv6"))
  (export $ip-family "ip-family" (type $ip-family'))
  (type $render-options'
    (record
      (field "proxy-mode" $proxy-mode)
      (field "ip-family" (option $ip-family))
      (field "node" (option string))
      (field "standalone" bool)))
  (export $render-options "render-options" (type $render-options'))
  (type $trace-options'
    (record
      (field "src" string)
      (field "dst" string)
      (field "dport" u16)
      (field "protocol" string)
      (field "node" (option string))
      (field "in-interface" (option string))))
  (export $trace-options "trace-options" (type $trace-options'))
  (type $severity' (enum "error" "warning" "info"))
  (export $severity "severity" (type $severity'))
  (type $object-ref' (record (field "kind" string) (field "namespace" string) (field "name" string)))
  (export $object-ref "object-ref" (type $object-ref'))
  (type $source'
    (record (field "file" string) (field "document" u32) (field "line" u32) (field "column" u32)))
  (export $source "source" (type $source'))
  (type $diagnostic'
    (record
      (field "severity" $severity)
      (field "object" (option $object-ref))
      (field "field" string)
      (field "reason" string)
      (field "message" string)
      (field "source" (option $source))))
  (export $diagnostic "diagnostic" (type $diagnostic'))
  (type $error' (variant (case "bad-input" string) (case "failed" string)))
  (export $error "error" (type $error'))
  (type $text-report' (record (field "text" string) (field "has-errors" bool)))
  (export $text-report "text-report" (type $text-report'))
  (type $upgrade-options'
    (record
      (field "to" string)
      (field "proxy-mode" (option $proxy-mode))
      (field "to-profile" (option $input))
      (field "diff" bool)))
  (export $upgrade-options "upgrade-options" (type $upgrade-options'))
  (type $test-options' (record (field "update" bool)))
  (export $test-options "test-options" (type $test-options'))
  (type $test-run'
    (record (field "json" string) (field "text" string) (field "updated" (list $input))))
  (export $test-run "test-run" (type $test-run'))

  (func (export "abi-version") (result u32) (canon lift (core func $i "abi-version")))
  (func (export "check")
    (param "inputs" (list $input)) (param "options" $check-options)
    (result (result string (error $error)))
    (canon lift (core func $i "check") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  ;; `check-text` is the core `check` read as a `text-report`: the same text, and `has-errors`
  ;; (byte 28 of the return area, which nothing writes) false.
  (func (export "check-text")
    (param "inputs" (list $input)) (param "options" $check-options)
    (result (result $text-report (error $error)))
    (canon lift (core func $i "check") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  (func (export "diagnose")
    (param "inputs" (list $input)) (param "options" $check-options)
    (result (result (list $diagnostic) (error $error)))
    (canon lift (core func $i "diagnose") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  (func (export "render")
    (param "inputs" (list $input)) (param "options" $render-options)
    (result (result string (error $error)))
    (canon lift (core func $i "render") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  (func (export "render-begin")
    (param "inputs" (list $input)) (param "options" $render-options)
    (result (result (error $error)))
    (canon lift (core func $i "render-begin") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  (func (export "render-next")
    (result (option string))
    (canon lift (core func $i "render-next") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  (func (export "trace")
    (param "inputs" (list $input)) (param "options" $trace-options)
    (result (result string (error $error)))
    (canon lift (core func $i "trace") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  (func (export "upgrade")
    (param "inputs" (list $input)) (param "options" $upgrade-options)
    (result (result string (error $error)))
    (canon lift (core func $i "upgrade") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  ;; `upgrade-text` is the core `upgrade` read as a `text-report`, like `check-text`.
  (func (export "upgrade-text")
    (param "inputs" (list $input)) (param "options" $upgrade-options)
    (result (result $text-report (error $error)))
    (canon lift (core func $i "upgrade") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  (func (export "validate-admission")
    (param "review" string) (param "options" $admission-options)
    (result (result string (error $error)))
    (canon lift (core func $i "validate-admission") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  (func (export "check-settings")
    (param "settings" $input)
    (result (result (list $diagnostic) (error $error)))
    (canon lift (core func $i "check-settings") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  (func (export "settings-schema")
    (result string)
    (canon lift (core func $i "settings-schema") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  (func (export "test-files")
    (param "suites" (list $input))
    (result (list string))
    (canon lift (core func $i "test-files") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  (func (export "run-tests")
    (param "suites" (list $input)) (param "files" (list $input)) (param "options" $test-options)
    (result (result $test-run (error $error)))
    (canon lift (core func $i "run-tests") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
  (func (export "test-schema")
    (result string)
    (canon lift (core func $i "test-schema") (memory (core memory $i "memory")) (realloc (core func $i "cabi_realloc"))))
)
