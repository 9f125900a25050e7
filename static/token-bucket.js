// A token bucket: `rate` a second, at most `burst` at once. One for the page (apps-host.js) and
// the MCP Apps sandbox proxy (apps-sandbox.js, which core/sandbox.py serves this file beside);
// playground/token_bucket.py is its twin on the server side.
(() => {
  "use strict";
  window.tokenBucket = (rate, burst) => {
    let tokens = burst;
    let last = performance.now();
    return {
      // Spend one token if there is one (false: there is not).
      take() {
        const now = performance.now();
        tokens = Math.min(burst, tokens + ((now - last) / 1000) * rate);
        last = now;
        if (tokens < 1) return false;
        tokens--;
        return true;
      },
    };
  };
})();
