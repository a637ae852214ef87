package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.analysis.NamedRelation;
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeMap;
import org.apache.spark.sql.catalyst.expressions.AttributeMap$;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.plans.logical.AppendData;
import org.apache.spark.sql.catalyst.plans.logical.InsertIntoStatement;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.MergeIntoTable;
import org.apache.spark.sql.catalyst.rules.Rule;
import org.apache.spark.sql.connector.catalog.CatalogManager;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import scala.Option;
import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * {@code writeTo(t).option("mergeSchema", "true").append()}, {@code
 * df.write.option("mergeSchema", "true").mode("append").saveAsTable(t)} and {@code
 * .insertInto(t)} into a plugin table:
 * the append writes into the table as the write will leave it (its new FIELD columns added,
 * its columns widened), which Python decides ({@code merged_schema}, the {@code tsfile}
 * writer's own rules, refusing with its message). Spark then matches and casts the columns (by
 * name, or by position: the data's first columns are the table's, its trailing ones the new
 * columns, as Delta's insertInto) as for any write, and the writer, given {@code mergeSchema},
 * commits the new schema with the rows in one commit. An {@code INSERT WITH SCHEMA EVOLUTION
 * INTO t …} (Spark 4.2.1 and 4.3) is the same append: its target reports no {@code AUTOMATIC_SCHEMA_EVOLUTION}, so
 * Spark's {@code ResolveSchemaEvolution} does not {@code alterTable} first (a commit of its
 * own), and the writer merges the schema with the rows as for {@code mergeSchema}.
 *
 * <p>Spark's output check of a write runs in the batch that resolves relations, before any
 * injected resolution rule, and refuses the new columns; and the query is not always resolved
 * yet when the hint rules run. So {@link Mark} (a hint rule) marks the target as accepting any
 * columns, which makes the check wait, and {@link Resolve} (a resolution rule) replaces it by
 * the merged table once the query is resolved; the check then runs as for any write.
 *
 * <p>{@code MERGE WITH SCHEMA EVOLUTION INTO t …} (Spark 4.2.1 and 4.3) is one commit the same
 * way. Spark's {@code ResolveSchemaEvolution} would {@code alterTable} the MERGE's {@code
 * pendingSchemaChanges} (the source's new columns its {@code SET *}, {@code INSERT *} or
 * assignments name, and its other types) as soon as the MERGE is resolved but for them, a
 * commit of its own (even for an EXPLAIN), before the MERGE runs. It runs early in the
 * analyzer's Resolution batch, before {@code ResolveReferences}; the injected resolution
 * rules run last in it (Spark 4.2.1 and 4.3). So {@link Resolve} sees that MERGE first, at the
 * end of the iteration that resolved it, and makes its target the
 * table as the MERGE leaves it, Python deciding as for an append ({@code merge_evolution}):
 * Spark's own rule then finds nothing pending, its copy-on-write scan reads the old rows under
 * the new schema (new columns NULL, widened columns cast) and its write merges the schema with
 * the rows. A change the table refuses is refused there, naming the column, before anything
 * runs.
 */
final class MergeSchemaWrites {
  private MergeSchemaWrites() {}

  /**
   * The hint rule: a {@code mergeSchema} append into a plugin table writes into the
   * table marked as accepting any columns ({@link TsFileTable#pendingMerge}), so that Spark's
   * output check waits for {@link Resolve}, which needs the query resolved.
   */
  static final class Mark extends Rule<LogicalPlan> {
    private final SparkSession session;

    Mark(SparkSession session) {
      this.session = session;
    }

    @Override
    public LogicalPlan apply(LogicalPlan plan) {
      if (plan instanceof InsertIntoStatement) {
        return markInsert((InsertIntoStatement) plan);
      }
      if (!(plan instanceof AppendData)) {
        return plan;
      }
      AppendData append = (AppendData) plan;
      if (!merging(append) && !evolving(append)) {
        return plan;
      }
      Target target = target(session, append.table());
      if (target == null || target.table.isPendingMerge()) {
        return plan;
      }
      return append.withNewTable(relation(target, target.table.pendingMerge()));
    }

    /**
     * {@code INSERT WITH SCHEMA EVOLUTION INTO t [BY NAME] <query>}, an append: it inserts
     * into the marked table, which Spark's resolution of the INSERT keeps, and becomes the
     * marked append {@link Resolve} settles. Other INSERTs (with a column list, a partition,
     * an overwrite or a replace) are left to Spark.
     */
    private LogicalPlan markInsert(InsertIntoStatement insert) {
      if (insert.overwrite()
          || !insert.partitionSpec().isEmpty()
          || !insert.userSpecifiedCols().isEmpty()
          || !evolving(insert)
          || replacing(insert)
          || !(insert.table() instanceof UnresolvedRelation)) {
        return insert;
      }
      Target target = target(session, (UnresolvedRelation) insert.table());
      if (target == null) {
        return insert;
      }
      // The statement's fields differ between Spark versions; its table is the first.
      List<Object> fields = new ArrayList<>();
      CollectionConverters.asJava(insert.productIterator()).forEachRemaining(fields::add);
      // makeCopy is TreeNode's: the same constructor, this one field replaced.
      fields.set(0, relation(target, target.table.pendingMerge()));
      return insert.makeCopy(fields.toArray());
    }
  }

  /**
   * The resolution rule: once the query is resolved, the marked table becomes the table as the
   * append leaves it (Python's {@code merged_schema}; the table as it is when the append
   * changes nothing), which Spark's output check then matches the query against by name.
   */
  static final class Resolve extends Rule<LogicalPlan> {
    @Override
    public LogicalPlan apply(LogicalPlan plan) {
      if (plan instanceof MergeIntoTable) {
        return evolveMerge((MergeIntoTable) plan);
      }
      if (!(plan instanceof AppendData)) {
        return plan;
      }
      AppendData append = (AppendData) plan;
      if (!(append.table() instanceof DataSourceV2Relation) || !append.query().resolved()) {
        return plan;
      }
      DataSourceV2Relation current = (DataSourceV2Relation) append.table();
      if (!(current.table() instanceof TsFileTable)
          || !((TsFileTable) current.table()).isPendingMerge()) {
        return plan;
      }
      TsFileTable table = (TsFileTable) current.table();
      ObjectNode request = Client.object();
      request.set("write_options", Client.map(table.writeOptions()));
      request.set("options", Client.map(CollectionConverters.asJava(append.writeOptions())));
      StructType written = append.query().schema();
      if (!append.isByName()) {
        if (written.fields().length < table.schema().fields().length) {
          // Too few columns: Spark's own check refuses it, against the table as it is.
          return append.withNewTable(relation(targetOf(current), table.mergingWrite(null)));
        }
        written = byPosition(table.schema(), written);
      }
      request.put("schema", written.json());
      request.put("timestamp_as", table.scanDescription().path("timestamp_as").asText());
      JsonNode merged = Client.call("merged_schema", request);
      TsFileTable settled =
          table.mergingWrite(merged == null || merged.isNull() ? null : merged.asText());
      return append.withNewTable(relation(targetOf(current), settled));
    }

    /**
     * A {@code MERGE WITH SCHEMA EVOLUTION} whose changes Spark would now commit through
     * {@code alterTable}: its target becomes the table with them (or the table as it is when
     * the merge keeps its types), which reports no {@code AUTOMATIC_SCHEMA_EVOLUTION}, every
     * reference to the old target's columns rewritten to the new ones as Spark's own rule does.
     */
    private static LogicalPlan evolveMerge(MergeIntoTable merge) {
      if (!evolving(merge) || !(merge.table() instanceof DataSourceV2Relation)) {
        return merge;
      }
      DataSourceV2Relation current = (DataSourceV2Relation) merge.table();
      if (!(current.table() instanceof TsFileTable)
          || ((TsFileTable) current.table()).isMergingWrite()
          || current.catalog().isEmpty()
          || current.identifier().isEmpty()) {
        return merge;
      }
      List<TableChange> pending = CollectionConverters.asJava(merge.pendingSchemaChanges());
      if (pending.isEmpty()) {
        return merge;
      }
      TsFileTable table = (TsFileTable) current.table();
      ObjectNode request = Client.object();
      request.set("write_options", Client.map(table.writeOptions()));
      request.set("scan", table.scanDescription());
      request.put("timestamp_as", table.scanDescription().path("timestamp_as").asText());
      ArrayNode changes = request.putArray("changes");
      for (TableChange change : pending) {
        ObjectNode json = Changes.toJson(change);
        // The whole type (Changes' simpleString drops what a decimal or a struct holds).
        if (change instanceof TableChange.AddColumn) {
          json.put("type_json", ((TableChange.AddColumn) change).dataType().json());
        } else if (change instanceof TableChange.UpdateColumnType) {
          json.put("type_json", ((TableChange.UpdateColumnType) change).newDataType().json());
        }
        changes.add(json);
      }
      JsonNode merged = Client.call("merge_evolution", request);
      TsFileTable settled =
          merged == null || merged.isNull()
              ? table.mergingWrite(null)
              : table.mergingWrite(merged.get("schema").asText(), merged.get("read_schema").asText());
      DataSourceV2Relation relation = relation(targetOf(current), settled);
      List<Tuple2<Attribute, Attribute>> renamed = new ArrayList<>();
      List<AttributeReference> now = CollectionConverters.asJava(relation.output());
      for (AttributeReference old : CollectionConverters.asJava(current.output())) {
        for (AttributeReference attribute : now) {
          if (attribute.name().equalsIgnoreCase(old.name())) {
            renamed.add(new Tuple2<>(old, attribute));
          }
        }
      }
      AttributeMap<Attribute> map =
          AttributeMap$.MODULE$.apply(CollectionConverters.asScala(renamed).toSeq());
      return (LogicalPlan) merge.withNewTable(relation).rewriteAttrs(map);
    }

    private static Target targetOf(DataSourceV2Relation current) {
      return new Target(
          current.catalog().get(),
          current.identifier().get(),
          (TsFileTable) current.table(),
          current.options());
    }

    /**
     * The columns a by-position append writes, as Spark and Delta match them: the first ones
     * are the table's columns in order (named as the table names them), the rest new columns
     * under the query's names.
     */
    private static StructType byPosition(StructType table, StructType written) {
      StructField[] fields = written.fields().clone();
      StructField[] existing = table.fields();
      for (int i = 0; i < existing.length; i++) {
        fields[i] =
            new StructField(
                existing[i].name(), fields[i].dataType(), fields[i].nullable(), fields[i].metadata());
      }
      return new StructType(fields);
    }
  }

  /**
   * Whether {@code write} is an {@code INSERT WITH SCHEMA EVOLUTION} (the flag read by name:
   * older Sparks have neither the flag nor the syntax).
   */
  private static boolean evolving(LogicalPlan write) {
    try {
      return Boolean.TRUE.equals(write.getClass().getMethod("withSchemaEvolution").invoke(write));
    } catch (ReflectiveOperationException notInThisSpark) {
      return false;
    }
  }

  /** Whether {@code insert} replaces rows ({@code INSERT … REPLACE …}, where Spark has it). */
  private static boolean replacing(InsertIntoStatement insert) {
    try {
      Object criteria = insert.getClass().getMethod("replaceCriteriaOpt").invoke(insert);
      return criteria instanceof Option && ((Option<?>) criteria).isDefined();
    } catch (ReflectiveOperationException notInThisSpark) {
      return false;
    }
  }

  static DataSourceV2Relation relation(Target target, TsFileTable table) {
    return DataSourceV2Relation.create(
        table, Option.apply(target.catalog), Option.apply(target.ident), target.options, Option.empty());
  }

  private static boolean merging(AppendData append) {
    for (Map.Entry<String, String> option :
        CollectionConverters.asJava(append.writeOptions()).entrySet()) {
      if ("mergeSchema".equalsIgnoreCase(option.getKey())
          && "true".equalsIgnoreCase(option.getValue().trim())) {
        return true;
      }
    }
    return false;
  }

  /** The plugin table an append writes into. */
  static final class Target {
    final CatalogPlugin catalog;
    final Identifier ident;
    final TsFileTable table;
    final CaseInsensitiveStringMap options;

    Target(CatalogPlugin catalog, Identifier ident, TsFileTable table, CaseInsensitiveStringMap options) {
      this.catalog = catalog;
      this.ident = ident;
      this.table = table;
      this.options = options;
    }
  }

  /** The plugin table {@code relation} names, or null (another catalog's, or not found). */
  static Target target(SparkSession session, NamedRelation relation) {
    if (relation instanceof DataSourceV2Relation) {
      DataSourceV2Relation resolved = (DataSourceV2Relation) relation;
      if (resolved.table() instanceof TsFileTable
          && resolved.catalog().isDefined()
          && resolved.identifier().isDefined()) {
        return new Target(
            resolved.catalog().get(),
            resolved.identifier().get(),
            (TsFileTable) resolved.table(),
            resolved.options());
      }
      return null;
    }
    if (!(relation instanceof UnresolvedRelation)) {
      return null;
    }
    UnresolvedRelation unresolved = (UnresolvedRelation) relation;
    if (session.sessionState().catalog().isTempView(unresolved.multipartIdentifier())) {
      return null; // a temporary view of the name comes first, as in Spark's resolution
    }
    List<String> parts = CollectionConverters.asJava(unresolved.multipartIdentifier());
    CatalogManager manager = session.sessionState().catalogManager();
    List<String> rest = new ArrayList<>(parts);
    String catalogName;
    if (parts.size() > 1 && manager.isCatalogRegistered(parts.get(0))) {
      catalogName = rest.remove(0);
    } else {
      catalogName = manager.currentCatalog().name();
      if (rest.size() == 1) {
        List<String> namespace = new ArrayList<>(List.of(manager.currentNamespace()));
        namespace.addAll(rest);
        rest = namespace;
      }
    }
    CatalogPlugin catalog = manager.catalog(catalogName);
    if (!(catalog instanceof TsFileCatalog) || rest.size() < 2) {
      return null;
    }
    Identifier ident =
        Identifier.of(rest.subList(0, rest.size() - 1).toArray(new String[0]), rest.get(rest.size() - 1));
    Table table;
    try {
      table = ((TsFileCatalog) catalog).loadTable(ident);
    } catch (Exception notFound) {
      return null; // Spark's own resolution reports it
    }
    if (!(table instanceof TsFileTable)) {
      return null;
    }
    // The relation's options as Spark's own resolution leaves them (without the write
    // privileges it asked the catalog for), or Spark's planning of the write refuses them.
    return new Target(catalog, ident, (TsFileTable) table, unresolved.clearWritePrivileges().options());
  }
}
