package io.tsfilecatalog.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.spark.sql.ExperimentalMethods;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.optimizer.ConvertToLocalRelation$;
import org.apache.spark.sql.catalyst.plans.logical.Aggregate;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2ScanRelation;
import scala.Option;
import scala.jdk.javaapi.CollectionConverters;

/**
 * An optimizer rule that turns a scan answered from statistics into a local relation, so that
 * Spark folds the projections above it too ({@code ConvertToLocalRelation}) and collecting
 * the answer runs no Spark job (a projection over a {@link
 * org.apache.spark.sql.connector.read.LocalScan} runs one).
 *
 * <p>It also answers, the same way, an aggregation with {@code max_by}/{@code min_by} that
 * Spark cannot push into the scan ({@link ByTimeAggregates}).
 *
 * <p>Spark's aggregate pushdown builds the scan after every operator rule ran, so this runs
 * with the session's extra optimizations, which {@code tsfile_catalog.register} installs.
 */
public final class LocalAnswers extends Rule<LogicalPlan> {
  /** Adds the rule to {@code session}'s extra optimizations, once. */
  public static void install(SparkSession session) {
    ExperimentalMethods experimental = session.experimental();
    List<Rule<LogicalPlan>> rules =
        new ArrayList<>(CollectionConverters.asJava(experimental.extraOptimizations()));
    if (rules.stream().noneMatch(rule -> rule instanceof LocalAnswers)) {
      rules.add(new LocalAnswers());
      experimental.extraOptimizations_$eq(CollectionConverters.asScala(rules).toSeq());
    }
  }

  /** Only plans holding a statistics answer change; their projections fold to a fixed point. */
  @Override
  public LogicalPlan apply(LogicalPlan plan) {
    LogicalPlan current = inline(plan);
    if (current == plan) {
      return plan;
    }
    LogicalPlan previous;
    do {
      previous = current;
      current = ConvertToLocalRelation$.MODULE$.apply(previous);
    } while (!current.fastEquals(previous));
    return current;
  }

  private static LogicalPlan inline(LogicalPlan plan) {
    return Plans.replaceDown(plan, LocalAnswers::answer);
  }

  /** The local relation answering {@code node}, or null when it is not answered here. */
  private static LogicalPlan answer(LogicalPlan node) {
    if (node instanceof Aggregate) {
      return ByTimeAggregates.answer((Aggregate) node);
    }
    if (!(node instanceof DataSourceV2ScanRelation)) {
      return null;
    }
    DataSourceV2ScanRelation relation = (DataSourceV2ScanRelation) node;
    if (!(relation.scan() instanceof Aggregates.StatisticsScan)) {
      return null;
    }
    List<InternalRow> rows = Arrays.asList(((Aggregates.StatisticsScan) relation.scan()).rows());
    List<Attribute> output = new ArrayList<>(CollectionConverters.asJava(relation.output()));
    return new LocalRelation(
        CollectionConverters.asScala(output).toSeq(),
        CollectionConverters.asScala(rows).toSeq(),
        false,
        Option.empty());
  }
}
