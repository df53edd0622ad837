// Starts the playground: loads the wasm engine (same origin) and lets yew render the page.
import init from "./svclab_playground.js";

const started = performance.now();
init({ module_or_path: new URL("svclab_playground_bg.wasm", import.meta.url) })
  .then(() => {
    document.getElementById("loading")?.remove();
    window.__svclabStartMs = performance.now() - started;
  })
  .catch((error) => {
    const box = document.getElementById("loading");
    if (box) box.textContent = `The svclab engine failed to load: ${error}`;
    throw error;
  });
