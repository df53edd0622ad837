;; An http-wasm guest that traps (`unreachable`) on every request whose method starts with P
;; (POST, PUT, PATCH) and passes the others to the next handler: the gateway test checks that
;; the trapping request is refused (fail closed) and that the gateway keeps serving.
(module
  (import "http_handler" "get_method" (func $get_method (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  ;; -> (context << 32) | next
  (func (export "handle_request") (result i64)
    (drop (call $get_method (i32.const 0) (i32.const 16)))
    (if (i32.eq (i32.load8_u (i32.const 0)) (i32.const 80)) (then unreachable))
    (i64.const 1))
  (func (export "handle_response") (param i32 i32)))
