import { defineConfig } from "vitest/config";
export default defineConfig({ test: { include: ["test/unit/redact*.test.ts"], setupFiles: ["/tmp/redact-work/seed-setup.ts"], pool: "forks", maxWorkers: 1 } });
