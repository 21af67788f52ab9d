/**
 * One measured number from a benchmark, in the shape the bench runner collects and prints:
 * `value` in `unit`, optionally against a `baseline` (same unit) with `ratio` = value / baseline.
 */
export interface BenchResult {
  name: string;
  metric: string;
  value: number;
  unit: string;
  baseline?: number;
  ratio?: number;
  note?: string;
}
