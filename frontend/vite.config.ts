/// <reference types="vitest/config" />
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

// The bundle is committed under torch_tb_profiler/static and checked against a rebuild, so file names
// are fixed (no content hashes) and every URL is relative: the app is served both from TensorBoard's
// plugin iframe and standalone at /data/plugin/pytorch_profiler/index.html.
export default defineConfig({
  base: "./",
  plugins: [react()],
  build: {
    outDir: "../torch_tb_profiler/static",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    modulePreload: false,
    chunkSizeWarningLimit: 1200,
    rolldownOptions: {
      output: {
        entryFileNames: "assets/app.js",
        chunkFileNames: "assets/[name].js",
        assetFileNames: "assets/[name][extname]",
        // vendor code in its own files: the app's own chunk stays small and readable in diffs
        advancedChunks: {
          groups: [
            { name: "echarts", test: /node_modules[\\/](echarts|zrender|tslib)/ },
            { name: "vendor", test: /node_modules/ },
          ],
        },
      },
    },
  },
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
  },
});
