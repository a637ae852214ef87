package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.SparkSessionExtensions;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeSet;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.analysis.NamedRelation;
import org.apache.spark.sql.catalyst.plans.logical.Command;
import org.apache.spark.sql.catalyst.plans.logical.InsertAction;
import org.apache.spark.sql.catalyst.plans.logical.InsertStarAction;
import org.apache.spark.sql.catalyst.plans.logical.MergeAction;
import org.apache.spark.sql.catalyst.plans.logical.MergeIntoTable;
import org.apache.spark.sql.catalyst.plans.logical.SubqueryAlias;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.RowLevelWrite;
import org.apache.spark.sql.catalyst.plans.logical.Statistics;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.catalyst.types.DataTypeUtils;
import org.apache.spark.sql.connector.write.RowLevelOperation;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.execution.CommandResultExec;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.SparkStrategy;
import org.apache.spark.sql.execution.datasources.v2.DeleteFromTableExec;
import org.apache.spark.sql.execution.datasources.v2.V2CommandExec;
import org.apache.spark.sql.execution.datasources.v2.V2ExistingTableWriteExec;
import org.apache.spark.sql.types.StructType;
import scala.Enumeration;
import scala.collection.immutable.IndexedSeq;
import scala.collection.immutable.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * {@code UPDATE}, {@code MERGE INTO} and {@code DELETE FROM} of a catalog table through plain
 * {@code spark.sql} return their row counts, with the columns and values {@code Catalog.sql}
 * returns for the same statement (Delta's: {@code num_affected_rows}, ...), which the delegate
 * decides ({@code tsfile_catalog/spark_catalog/row_counts.py}).
 *
 * <p>Spark plans such a statement as its own command ({@code ReplaceData}, or {@code WriteDelta}
 * for a delta, {@link TsFileDeltaOperation}) whose result has no
 * columns. After resolution ({@link Wrap}, a post-hoc resolution rule: Spark rewrites the
 * statement into {@code ReplaceData} in its resolution batch) the command of a catalog table
 * becomes the child of {@link Counted}, which has the result's columns; {@link Plan} plans it as
 * {@link Exec}, which answers, once the command ran (Spark runs a command's child commands
 * first, each as a query of its own), with the counts of that statement:
 * those Spark handed its write ({@link RowFedWrite}), or those of the delegate's DELETE when
 * Spark's optimizer turned a DELETE into a metadata delete ({@link TsFileTable#deleted}). A
 * statement on any other table is left as Spark planned it.
 */
public final class RowCounts {
  private RowCounts() {}

  /** Adds the rules and the strategy to every session of the application. */
  static void inject(SparkSessionExtensions extensions) {
    extensions.injectHintResolutionRule(
        new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
          @Override
          public Rule<LogicalPlan> apply(SparkSession session) {
            return new MarkInserts(session);
          }
        });
    extensions.injectPostHocResolutionRule(
        new AbstractFunction1<SparkSession, Rule<LogicalPlan>>() {
          @Override
          public Rule<LogicalPlan> apply(SparkSession session) {
            return new Wrap();
          }
        });
    extensions.injectPlannerStrategy(
        new AbstractFunction1<SparkSession, SparkStrategy>() {
          @Override
          public SparkStrategy apply(SparkSession session) {
            return new Plan();
          }
        });
  }

  /**
   * A MERGE of a catalog table whose every clause inserts ({@code WHEN NOT MATCHED THEN
   * INSERT}), which Spark writes as an append with no result, as the child of {@link Counted},
   * its target marked ({@link TsFileTable#insertingMerge}) so that the append is committed as
   * the MERGE ({@code plan_inserts}). A hint rule: Spark rewrites the MERGE as soon as it is
   * resolved, in the batch that resolves it.
   */
  static final class MarkInserts extends Rule<LogicalPlan> {
    private final SparkSession session;

    MarkInserts(SparkSession session) {
      this.session = session;
    }

    @Override
    public LogicalPlan apply(LogicalPlan plan) {
      if (!(plan instanceof MergeIntoTable)) {
        return plan;
      }
      MergeIntoTable merge = (MergeIntoTable) plan;
      if (!merge.matchedActions().isEmpty() || !merge.notMatchedBySourceActions().isEmpty()) {
        return plan;
      }
      for (MergeAction action : CollectionConverters.asJava(merge.notMatchedActions())) {
        if (!(action instanceof InsertAction) && !(action instanceof InsertStarAction)) {
          return plan;
        }
      }
      LogicalPlan target = merge.targetTable();
      SubqueryAlias alias = target instanceof SubqueryAlias ? (SubqueryAlias) target : null;
      LogicalPlan named = alias == null ? target : alias.child();
      if (!(named instanceof NamedRelation)) {
        return plan;
      }
      MergeSchemaWrites.Target found = MergeSchemaWrites.target(session, (NamedRelation) named);
      if (found == null || found.table.isInsertingMerge()) {
        return plan;
      }
      ObjectNode request = Client.object();
      request.set("scan", found.table.scanDescription());
      LogicalPlan marked =
          MergeSchemaWrites.relation(
              found, found.table.insertingMerge(Client.call("plan_inserts", request)));
      if (alias != null) {
        marked = alias.withNewChildren(seq(List.of(marked)));
      }
      // The statement's fields differ between Spark versions; its target is the first.
      List<Object> fields = new ArrayList<>();
      CollectionConverters.asJava(merge.productIterator()).forEachRemaining(fields::add);
      fields.set(0, marked);
      return new Counted(merge.makeCopy(fields.toArray()), output("MERGE"), "MERGE");
    }
  }

  /** The result columns of {@code operation}, as the delegate gives them. */
  private static Seq<Attribute> output(String operation) {
    ObjectNode request = Client.object();
    request.put("operation", operation);
    StructType schema = StructType.fromDDL(Client.call("row_counts_schema", request).asText());
    @SuppressWarnings("unchecked")
    Seq<Attribute> output = (Seq<Attribute>) (Seq<?>) DataTypeUtils.toAttributes(schema);
    return output;
  }

  /** A catalog table's row-level command as the child of {@link Counted}. */
  static final class Wrap extends Rule<LogicalPlan> {
    @Override
    public LogicalPlan apply(LogicalPlan plan) {
      if (!(plan instanceof RowLevelWrite) || !ours(((RowLevelWrite) plan).operation())) {
        return plan;
      }
      String operation = ((RowLevelWrite) plan).operation().command().name();
      return new Counted(plan, output(operation), operation);
    }
  }

  /** Whether {@code operation} is a catalog table's (copy-on-write, or a delta). */
  static boolean ours(RowLevelOperation operation) {
    return operation instanceof TsFileRowLevelOperation
        || operation instanceof TsFileDeltaOperation;
  }

  /** {@link Counted} as {@link Exec}. */
  static final class Plan extends SparkStrategy {
    @Override
    public Seq<SparkPlan> apply(LogicalPlan plan) {
      if (!(plan instanceof Counted)) {
        return seq(List.of());
      }
      Counted counted = (Counted) plan;
      return seq(List.of(new Exec(planLater(counted.child), counted.output, counted.operation)));
    }
  }

  /** A row-level command ({@code child}) whose result is the statement's counts. */
  public static final class Counted extends LogicalPlan implements Command {
    private final LogicalPlan child;
    private final Seq<Attribute> output;
    private final String operation;
    private Seq<Enumeration.Value> patterns;

    public Counted(LogicalPlan child, Seq<Attribute> output, String operation) {
      this.child = child;
      this.output = output;
      this.operation = operation;
      Command.$init$(this);
    }

    @Override
    public void org$apache$spark$sql$catalyst$plans$logical$Command$_setter_$nodePatterns_$eq(
        Seq<Enumeration.Value> value) {
      patterns = value;
    }

    @Override
    public Seq<Enumeration.Value> nodePatterns() {
      return patterns;
    }

    @Override
    public Seq<Attribute> output() {
      return output;
    }

    @Override
    public AttributeSet producedAttributes() {
      return outputSet();
    }

    @Override
    public Statistics stats() {
      return Command.super.stats();
    }

    @Override
    public Seq<LogicalPlan> children() {
      return seq(List.of(child));
    }

    @Override
    public LogicalPlan withNewChildrenInternal(IndexedSeq<LogicalPlan> children) {
      return new Counted(children.apply(0), output, operation);
    }

    @Override
    public int productArity() {
      return 3;
    }

    @Override
    public Object productElement(int n) {
      return n == 0 ? child : n == 1 ? output : operation;
    }

    @Override
    public boolean canEqual(Object other) {
      return other instanceof Counted;
    }

    @Override
    public boolean equals(Object other) {
      if (!(other instanceof Counted)) {
        return false;
      }
      Counted that = (Counted) other;
      return child.equals(that.child)
          && output.equals(that.output)
          && operation.equals(that.operation);
    }

    @Override
    public int hashCode() {
      return Objects.hash(child, output, operation);
    }
  }

  /** Runs the command, then answers with the counts of that statement. */
  public static final class Exec extends V2CommandExec {
    private final SparkPlan child;
    private final Seq<Attribute> output;
    private final String operation;

    public Exec(SparkPlan child, Seq<Attribute> output, String operation) {
      this.child = child;
      this.output = output;
      this.operation = operation;
    }

    @Override
    public Seq<InternalRow> run() {
      child.executeCollect();
      JsonNode values = values();
      Object[] row = new Object[output.size()];
      for (int i = 0; i < row.length; i++) {
        JsonNode value = values.get(i);
        row[i] = value == null || value.isNull() ? null : value.asLong();
      }
      return seq(List.of(new GenericInternalRow(row)));
    }

    /** The result row's values, as the delegate gave them. */
    private JsonNode values() {
      // Spark runs a command's child commands first (QueryExecution's NON_ROOT mode): the
      // child is the result of the row-level command, which holds how it ran.
      SparkPlan command =
          child instanceof CommandResultExec
              ? ((CommandResultExec) child).commandPhysicalPlan()
              : child;
      if (command instanceof DeleteFromTableExec
          && ((DeleteFromTableExec) command).table() instanceof TsFileTable) {
        // Spark's optimizer made the DELETE the delegate's, which returned its result.
        return ((TsFileTable) ((DeleteFromTableExec) command).table()).deleted();
      }
      // ReplaceData's, WriteDelta's, or an insert-only MERGE's append (InsertOnlyMerge).
      Write written =
          command instanceof V2ExistingTableWriteExec
              ? ((V2ExistingTableWriteExec) command).write()
              : null;
      if (written instanceof RowFedWrite) {
        RowFedWrite write = (RowFedWrite) written;
        ObjectNode request = Client.object();
        request.put("operation", operation);
        request.put("write_id", write.writeId());
        request.set("summary", write.counts());
        request.set("options", Client.map(write.options()));
        return Client.call("row_counts", request);
      }
      throw new IllegalStateException(
          "tsfile " + operation + ": no row counts from " + command.nodeName());
    }

    @Override
    public Seq<Attribute> output() {
      return output;
    }

    @Override
    public Seq<SparkPlan> children() {
      return seq(List.of(child));
    }

    @Override
    public SparkPlan withNewChildrenInternal(IndexedSeq<SparkPlan> children) {
      return new Exec(children.apply(0), output, operation);
    }

    @Override
    public int productArity() {
      return 3;
    }

    @Override
    public Object productElement(int n) {
      return n == 0 ? child : n == 1 ? output : operation;
    }

    @Override
    public boolean canEqual(Object other) {
      return other instanceof Exec;
    }

    @Override
    public boolean equals(Object other) {
      if (!(other instanceof Exec)) {
        return false;
      }
      Exec that = (Exec) other;
      return child.equals(that.child)
          && output.equals(that.output)
          && operation.equals(that.operation);
    }

    @Override
    public int hashCode() {
      return Objects.hash(child, output, operation);
    }
  }

  private static <T> Seq<T> seq(List<T> list) {
    return CollectionConverters.asScala(list).toSeq();
  }
}
