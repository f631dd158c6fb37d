package simpleauth

import zio.metrics.{MetricLabel, MetricPair, MetricState}

/**
 * Prometheus text exposition format 0.0.4 for a snapshot of ZIO metrics: one `# TYPE` line per family, families,
 * series and labels in a stable (sorted) order. Histograms give cumulative `_bucket{le}` series (ZIO's last bound, `Double.MaxValue`,
 * is `+Inf`), `_sum` and `_count`; summaries their quantiles, `_sum` and `_count`; frequencies one counter series
 * per value (label `bucket`).
 */
object PrometheusText:
  def render(metrics: Iterable[MetricPair.Untyped]): String =
    val sb = new java.lang.StringBuilder(4096)
    metrics.groupBy(p => name(p.metricKey.name)).toList.sortBy(_._1).foreach { (family, pairs) =>
      val sorted = pairs.toList.sortBy(p => labels(sortedTags(p)))
      sorted.head.metricState match
        case _: MetricState.Counter   => sb.append("# TYPE ").append(family).append(" counter\n")
        case _: MetricState.Gauge     => sb.append("# TYPE ").append(family).append(" gauge\n")
        case _: MetricState.Histogram => sb.append("# TYPE ").append(family).append(" histogram\n")
        case _: MetricState.Summary   => sb.append("# TYPE ").append(family).append(" summary\n")
        case _: MetricState.Frequency => sb.append("# TYPE ").append(family).append(" counter\n")
      sorted.foreach { pair =>
        val tags = sortedTags(pair)
        pair.metricState match
          case MetricState.Counter(count) => sample(sb, family, tags, count)
          case MetricState.Gauge(value)   => sample(sb, family, tags, value)
          case MetricState.Histogram(buckets, count, _, _, sum) =>
            var infDone = false
            buckets.foreach { (bound, cumulative) =>
              val le = if bound >= Double.MaxValue then { infDone = true; "+Inf" } else number(bound)
              sample(sb, family + "_bucket", tags :+ MetricLabel("le", le), cumulative.toDouble)
            }
            if !infDone then sample(sb, family + "_bucket", tags :+ MetricLabel("le", "+Inf"), count.toDouble)
            sample(sb, family + "_sum", tags, sum)
            sample(sb, family + "_count", tags, count.toDouble)
          case MetricState.Summary(_, quantiles, count, _, _, sum) =>
            quantiles.foreach { (q, value) =>
              sample(sb, family, tags :+ MetricLabel("quantile", number(q)), value.getOrElse(Double.NaN))
            }
            sample(sb, family + "_sum", tags, sum)
            sample(sb, family + "_count", tags, count.toDouble)
          case MetricState.Frequency(occurrences) =>
            occurrences.toList.sortBy(_._1).foreach((value, n) => sample(sb, family, tags :+ MetricLabel("bucket", value), n.toDouble))
      }
    }
    sb.toString

  private def sortedTags(pair: MetricPair.Untyped): List[MetricLabel] = pair.metricKey.tags.toList.sortBy(_.key)

  private def sample(sb: java.lang.StringBuilder, family: String, tags: List[MetricLabel], value: Double): Unit =
    sb.append(family).append(labels(tags)).append(' ').append(number(value)).append('\n')

  private def labels(tags: List[MetricLabel]): String =
    if tags.isEmpty then ""
    else tags.map(t => s"""${name(t.key)}="${escape(t.value)}"""").mkString("{", ",", "}")

  /** Metric and label names may hold `[a-zA-Z0-9_:]` only (a library's own metric could carry others). */
  private def name(s: String): String = s.map(c => if c.isLetterOrDigit && c < 128 || c == '_' || c == ':' then c else '_')

  private def escape(s: String): String = s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")

  /** Shortest plain form: `5`, `0.0001`, `2.5`; `+Inf`, `-Inf`, `NaN` as the format spells them. */
  def number(d: Double): String =
    if d.isNaN then "NaN"
    else if d.isPosInfinity then "+Inf"
    else if d.isNegInfinity then "-Inf"
    else java.math.BigDecimal.valueOf(d).stripTrailingZeros.toPlainString
