// Build: `npm run build` writes webui/dist, which `python -m lzlite.webui` serves.
// Dev: `npm run dev` serves the sources with hot reload and forwards /ws to a bridge on 127.0.0.1:8000.
import { defineConfig } from "vitest/config";
import react from "@vitejs/plugin-react";

export default defineConfig({
  plugins: [react()],
  base: "./",
  build: { outDir: "dist", emptyOutDir: true },
  server: {
    proxy: { "/ws": { target: "ws://127.0.0.1:8000", ws: true } },
  },
  test: {
    environment: "jsdom",
    globals: true,
    include: ["src/**/*.test.{ts,tsx}"],
    // One jsdom per worker thread, not per file (a quarter of the time on a 2-core machine); every test
    // unmounts what it rendered (cleanup) and leaves no timers or globals behind.
    pool: "threads",
    isolate: false,
  },
});
